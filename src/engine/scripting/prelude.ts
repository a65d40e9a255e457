/**
 * The Lua side of the scripting runtime, run once in every fresh Lua state (runtime.ts). It
 * builds what Redis 7.0 gives scripts: the redis table (call, pcall, error_reply...), the
 * protected globals, the cjson/cmsgpack/struct/bit libraries (thin wrappers over JS bridges),
 * Redis's deterministic math.random, and the runner that calls a script and converts its result
 * to RESP (Redis's luaReplyToRedisReply rules) as one serialised string read by JS.
 *
 * Serialisation (Lua -> JS), one string of tokens:
 *   s<len>:<bytes>   string          n<%.17g>;   number        T / F   true / false
 *   N                nil             a<count>;   array header  e<len>:<msg> / o<len>:<msg>
 *   t<count>;        table with <count> key/value pairs follow (cjson, cmsgpack)
 *   z                cjson.null      x<type>;    function/userdata/thread      D  too deep
 *
 * The chunk is called with R, the registry, and the spec of the bridges (JS functions, runtime.ts).
 */
export const PRELUDE_NAME = '=redis';

/**
 * The runners' Lua text (see "The runners" in PRELUDE): for EVAL (KEYS and ARGV set in G) and
 * functions (given as arguments), by the shape their arguments come in.
 */
const RUNNERS = (['eval', 'fn'] as const).flatMap((kind) => [
  ['0', 'f, ...', '{}', '{ ... }'],
  ['1', 'f, k1, ...', '{ k1 }', '{ ... }'],
  ['2', 'f, k1, k2, ...', '{ k1, k2 }', '{ ... }'],
  ['n', 'f, nk, ...', null, null],
  ['t', 'f, keys, argv', 'keys', 'argv'],
].map(([shape, params, keys, argv]) => {
  // G has no __newindex: plain assignments (no rawset call). No tail call: errh walks the frames.
  const args = keys === null ? ['local keys, argv = split(nk, ...)'] : keys === 'keys' ? [] : [`local keys, argv = ${keys}, ${argv}`];
  return [
    `R.__run_${kind}${shape} = function(${params})`,
    ...args,
    ...(kind === 'eval' ? ['  G.KEYS = keys', '  G.ARGV = argv'] : []),
    '  if resp ~= 2 then resp2() end',
    '  start_h, start_l = rh, rl',
    '  if not armed then arm() end',
    `  local res = f(${kind === 'eval' ? '' : 'keys, argv'})`,
    '  return res',
    'end',
  ].join('\n');
})).join('\n');

export const PRELUDE = String.raw`
local R, spec = ...
local G = _G
local B = {}
for k, v in string.gmatch(spec, '([%w_]+)=([^;]*);') do
  if string.sub(v, 1, 6) == '__slot' then B[k] = R[v] else B[k] = v end
end
local NULL = newproxy(false)
R.__null = NULL
local type, tostring, tonumber, error, pcall, xpcall, select, rawget, rawset, next, unpack, setmetatable, getmetatable, ipairs, pairs =
      type, tostring, tonumber, error, pcall, xpcall, select, rawget, rawset, next, unpack, setmetatable, getmetatable, ipairs, pairs
local sformat, sbyte, ssub, sfind, sgsub, tconcat = string.format, string.byte, string.sub, string.find, string.gsub, table.concat
local floor, fmod = math.floor, math.fmod
local getinfo, sethook, setfenv, getfenv = debug.getinfo, debug.sethook, setfenv, getfenv
local loadstring0, pcall0, dump = loadstring, pcall, string.dump
R.__dump = dump
local collectgarbage = collectgarbage
-- Read-only proxies (see "globals"): proxy -> real table; proxy -> the metatable getmetatable
-- shows (Redis's own, if any).
local VIEW, SHOWN = {}, {}
local RUNTIME = '=redis'

-- perf: a non-integer turned into text costs ~0.5 us in WebAssembly (the C library's printf),
-- more than the rest of a serialised element: the
-- length and count headers of the serialised forms below are made once per value and kept
-- (below 4096; larger ones are made each time).
local function header_memo(prefix, suffix)
  return setmetatable({}, { __index = function(t, n)
    local h = prefix .. n .. suffix
    if n < 4096 then rawset(t, n, h) end
    return h
  end })
end
local S_HDR, A_HDR, T_HDR = header_memo('s', ':'), header_memo('a', ';'), header_memo('t', ';')
local N_HDR = header_memo('n', ';')

-- ------------------------------------------------------------------ errors

-- sdstrim(s, "\r\n"): both ends.
local function trim(s)
  return (sgsub(sgsub(s, '^[\r\n]+', ''), '[\r\n]+$', ''))
end

-- Redis's luaPushError: "-CODE msg" or "msg" (code ERR) -> {err="CODE msg"}.
local function err_table(msg)
  local code, m
  if ssub(msg, 1, 1) == '-' then
    local sp = sfind(msg, ' ', 1, true)
    if sp then code, m = ssub(msg, 2, sp - 1), ssub(msg, sp + 1)
    else code, m = 'ERR', ssub(msg, 2) end
  else
    code, m = 'ERR', msg
  end
  return { err = code .. ' ' .. trim(m) }
end

local function raise(msg)
  error(err_table(msg), 0)
end

-- The error handler of script calls (Redis's __redis__err__handler): errors become tables
-- with the source and line of the script frame. Runtime frames count as C frames.
local function is_runtime(i) return i.source == RUNTIME end
local function errh(err)
  local lvl = 2
  local i = getinfo(lvl, 'nSl')
  if i and (i.what == 'C' or is_runtime(i)) then
    lvl = lvl + 1
    i = getinfo(lvl, 'nSl')
    while i and (is_runtime(i) or i.what == 'C') do
      lvl = lvl + 1
      i = getinfo(lvl, 'nSl')
    end
  end
  if type(err) ~= 'table' then
    err = { err = 'ERR ' .. tostring(err) }
  end
  if i then
    err.source = i.source
    err.line = i.currentline
  end
  return err
end

-- ------------------------------------------------------------------ serialisation

-- The protocol of the script's redis.call replies and of its booleans (redis.setresp).
local resp = 2

-- Redis converts a reply while lua_checkstack finds room: a value nested deeper than 7995
-- levels (a cyclic table, say) becomes this error, in its place.
local REPLY_DEPTH = 7995

-- A script's reply (Redis's luaReplyToRedisReply): err, ok, double, big_number,
-- verbatim_string, map and set tables are checked in Redis's order, then the array part.
-- Booleans: RESP2 scripts reply true as 1 and false as nil, RESP3 scripts as booleans.
local function ser_resp(v, out, n, d)
  if d > REPLY_DEPTH then
    out[n + 1] = 'e27:ERR reached lua stack limit'; return n + 1
  end
  local t = type(v)
  if t == 'string' then
    out[n + 1] = S_HDR[#v]; out[n + 2] = v; return n + 2
  elseif t == 'number' then
    -- (v + 0: -0 is written as 0, which it becomes anyway as an integer reply.)
    if v >= 0 and v < 4096 and v == floor(v) then out[n + 1] = N_HDR[v + 0]
    else out[n + 1] = 'n' .. sformat('%.17g', v) .. ';' end
    return n + 1
  elseif t == 'boolean' then
    if resp == 3 then out[n + 1] = v and 't' or 'f' else out[n + 1] = v and 'T' or 'F' end
    return n + 1
  elseif t == 'table' then
    -- perf: a table whose keys are all 1..#v (next finds nothing after #v) has none of the
    -- fields below: it is an array, without their seven lookups.
    local len = #v
    if next(v, len ~= 0 and len or nil) ~= nil then
      local e = rawget(v, 'err')
      if type(e) == 'string' then
        out[n + 1] = (rawget(v, 'ignore_err_stats_update') and 'E' or 'e') .. #e .. ':'; out[n + 2] = e; return n + 2
      end
      local o = rawget(v, 'ok')
      if type(o) == 'string' then
        out[n + 1] = 'o' .. #o .. ':'; out[n + 2] = o; return n + 2
      end
      local dbl = rawget(v, 'double')
      if type(dbl) == 'number' then
        out[n + 1] = 'D' .. sformat('%.17g', dbl) .. ';'; return n + 1
      end
      local bn = rawget(v, 'big_number')
      if type(bn) == 'string' then
        out[n + 1] = 'B' .. #bn .. ':'; out[n + 2] = bn; return n + 2
      end
      local vs = rawget(v, 'verbatim_string')
      if type(vs) == 'table' then
        local f, s = rawget(vs, 'format'), rawget(vs, 'string')
        if type(f) == 'string' and type(s) == 'string' then
          out[n + 1] = 'V' .. #f .. ':'; out[n + 2] = f; out[n + 3] = #s .. ':'; out[n + 4] = s; return n + 4
        end
      end
      local m = rawget(v, 'map')
      if type(m) == 'table' then
        local hdr = n + 1
        n = hdr
        local c = 0
        local k, x = next(m)
        while k ~= nil do
          n = ser_resp(k, out, n, d + 1)
          n = ser_resp(x, out, n, d + 1)
          c = c + 1
          k, x = next(m, k)
        end
        out[hdr] = 'M' .. c .. ';'
        return n
      end
      local st = rawget(v, 'set')
      if type(st) == 'table' then
        local hdr = n + 1
        n = hdr
        local c = 0
        local k = next(st)
        while k ~= nil do
          n = ser_resp(k, out, n, d + 1)
          c = c + 1
          k = next(st, k)
        end
        out[hdr] = 'S' .. c .. ';'
        return n
      end
    end
    local hdr = n + 1
    n = hdr
    local j = 1
    while true do
      local x = rawget(v, j)
      if x == nil then break end
      n = ser_resp(x, out, n, d + 1)
      j = j + 1
    end
    out[hdr] = A_HDR[j - 1]
    return n
  else
    out[n + 1] = 'N'; return n + 1
  end
end


-- perf: numbers (when runtime.ts reads them in place: B.direct) go out as 'd', their values
-- in NUMS, in order, read by JS from the table (no text conversion either way, exact).
local DIRECT = B.direct == '1'
local NUMS, nnum = {}, 0

local function ser_any(v, out, n, depth)
  local t = type(v)
  if t == 'string' then
    out[n + 1] = S_HDR[#v]; out[n + 2] = v; return n + 2
  elseif t == 'number' then
    if DIRECT then
      nnum = nnum + 1
      NUMS[nnum] = v
      out[n + 1] = 'd'; return n + 1
    end
    out[n + 1] = 'n' .. sformat('%.17g', v) .. ';'; return n + 1
  elseif t == 'boolean' then
    out[n + 1] = v and 'T' or 'F'; return n + 1
  elseif t == 'nil' then
    out[n + 1] = 'N'; return n + 1
  elseif v == NULL then
    out[n + 1] = 'z'; return n + 1
  elseif t == 'table' then
    if depth > 1000 then out[n + 1] = 'D'; return n + 1 end
    v = VIEW[v] or v
    local hdr = n + 1
    n = hdr
    local c = 0
    for k, x in next, v do
      n = ser_any(k, out, n, depth + 1)
      n = ser_any(x, out, n, depth + 1)
      c = c + 1
    end
    out[hdr] = T_HDR[c]
    return n
  else
    out[n + 1] = 'x' .. t .. ';'; return n + 1
  end
end

-- The serialised values and the table of their numbers (see ser_any).
local function serialise_any(...)
  local out, n = {}, 0
  nnum = 0
  -- (A large table of numbers is not kept from one call to the next.)
  if NUMS[257] ~= nil then NUMS = {} end
  for i = 1, select('#', ...) do n = ser_any((select(i, ...)), out, n, 1) end
  return tconcat(out, '', 1, n), NUMS
end

-- ------------------------------------------------------------------ the redis table

local redis = {}

-- The count hook and its state (defined with the runners below).
local hook, armed
local KILLED = 'Script killed by user with SCRIPT KILL...'

-- redis.call and redis.pcall are the call bridges themselves (C functions, as in Redis): a bulk
-- string or integer reply comes back as it is, a status or error reply as its table (runtime.ts);
-- the bridges call these helpers for the rest. No tail calls in them: the error handler walks
-- the frames.
R.__call_tonumber = tonumber
R.__call_killed = function()
  -- Stopped (SCRIPT KILL, or moved to the other state) before the command ran: as the hook.
  sethook(hook, 'l')
  armed = false
  error(err_table(KILLED), 0)
end
-- Not all arguments are strings: numbers are converted as Redis does (%.17g), others refused.
R.__call_convert = function(raise_err, ...)
  local n = select('#', ...)
  if n == 0 then
    local e = err_table('Please specify at least one argument for this redis lib call')
    if raise_err then error(e, 0) end
    return e
  end
  local args = { ... }
  for i = 1, n do
    local a = args[i]
    local t = type(a)
    if t == 'number' then
      args[i] = sformat('%.17g', a)
    elseif t ~= 'string' then
      local e = err_table('Lua redis lib command arguments must be strings or integers')
      if raise_err then error(e, 0) end
      return e
    end
  end
  local r = (raise_err and B.call or B.pcall)(unpack(args, 1, n))
  return r
end
redis.call = B.call
redis.pcall = B.pcall

function redis.error_reply(...)
  local e = ...
  if select('#', ...) ~= 1 or type(e) ~= 'string' then
    return err_table('wrong number or type of arguments')
  end
  if ssub(e, 1, 1) ~= '-' then e = '-' .. e end
  return err_table(e)
end

function redis.status_reply(...)
  local s = ...
  if select('#', ...) ~= 1 or type(s) ~= 'string' then
    return err_table('wrong number or type of arguments')
  end
  return { ok = s }
end

local sha1_bridge = B.sha1hex
function redis.sha1hex(...)
  if select('#', ...) ~= 1 then raise('wrong number of arguments') end
  local s = ...
  local t = type(s)
  if t == 'number' then s = tostring(s) elseif t ~= 'string' then s = '' end
  return sha1_bridge(s)
end

local log_bridge = B.log
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
function redis.log(...)
  local n = select('#', ...)
  if n < 2 then raise('redis.log() requires two arguments or more.') end
  local level = ...
  if type(level) ~= 'number' then raise('First argument must be a number (log level).') end
  if level < 0 or level > 3 then raise('Invalid debug level.') end
  local parts = {}
  for i = 2, n do
    local a = select(i, ...)
    local t = type(a)
    if t == 'string' or t == 'number' then parts[#parts + 1] = tostring(a) end
  end
  log_bridge(sformat('%d', level), tconcat(parts, ' '))
end

-- The protocol redis.call replies come in (the host renders them for it) and script
-- booleans go out in; every run starts with RESP2.
local setresp_bridge = B.setresp
function redis.setresp(...)
  if select('#', ...) ~= 1 then raise('redis.setresp() requires one argument.') end
  local v = tonumber((...))
  if v ~= 2 and v ~= 3 then raise('RESP version must be 2 or 3.') end
  resp = v
  setresp_bridge(v)
end
local function resp2()
  resp = 2
  setresp_bridge(2)
end

redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3
function redis.set_repl(...)
  if select('#', ...) ~= 1 then raise('redis.set_repl() requires two arguments.') end
  local f = tonumber((...))
  if f == nil or f < 0 or f > 3 or f ~= floor(f) then
    raise('Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.')
  end
end

function redis.replicate_commands() return true end
function redis.breakpoint() return false end
function redis.debug() end

local acl_bridge = B.acl_check
function redis.acl_check_cmd(...)
  local n = select('#', ...)
  if n < 1 then raise('Please specify at least one argument for this redis lib call') end
  local args = { ... }
  for i = 1, n do
    local a = args[i]
    if type(a) == 'number' then args[i] = sformat('%.17g', a)
    elseif type(a) ~= 'string' then raise('Lua redis lib command arguments must be strings or integers') end
  end
  local r = acl_bridge(unpack(args, 1, n))
  if r == 'u' then raise('Invalid command passed to redis.acl_check_cmd()') end
  return r == '1'
end

redis.REDIS_VERSION = B.version
redis.REDIS_VERSION_NUM = tonumber(B.version_num)

-- ------------------------------------------------------------------ math.random (Redis's rand48)

-- 48-bit state as two 24-bit halves, so every product stays exact in a double. It starts as
-- rand48's default state 0x1234ABCD330E (Redis never seeds it: the first math.random(1000) of a
-- fresh redis-server is 397) and persists from script to script.
local rh, rl = 0x1234AB, 0xCD330E
local function srand48(seed)
  seed = fmod(seed, 4294967296)
  if seed < 0 then seed = seed + 4294967296 end
  -- x = (seed << 16) | 0x330E
  local x = seed * 65536 + 0x330E
  rh = floor(x / 16777216); rl = x - rh * 16777216
end
local AH, AL = 0x5DE, 0xECE66D
local function lrand48()
  local lo = rl * AL + 0xB
  local carry = floor(lo / 16777216)
  lo = lo - carry * 16777216
  local hi = fmod(rh * AL + rl * AH + carry, 16777216)
  rh, rl = hi, lo
  -- (x >> 17): the top 31 bits of the 48-bit state
  return floor((hi * 16777216 + lo) / 131072)
end
R.__srand = srand48
local MAX = 2147483647
math.random = function(...)
  local r = fmod(lrand48(), MAX) / MAX
  local n = select('#', ...)
  if n == 0 then return r end
  local a, b = ...
  local function int(x, pos)
    local v = tonumber(x)
    if v == nil then error("bad argument #" .. pos .. " to 'random' (number expected, got " .. (x == nil and 'no value' or type(x)) .. ")", 3) end
    return v >= 0 and floor(v) or -floor(-v)
  end
  if n == 1 then
    local u = int(a, 1)
    if u < 1 then error("bad argument #1 to 'random' (interval is empty)", 2) end
    return floor(r * u) + 1
  elseif n == 2 then
    local l, u = int(a, 1), int(b, 2)
    if l > u then error("bad argument #2 to 'random' (interval is empty)", 2) end
    return floor(r * (u - l + 1)) + l
  end
  error('wrong number of arguments', 2)
end
math.randomseed = function(s)
  local v = tonumber(s)
  if v == nil then error("bad argument #1 to 'randomseed' (number expected, got " .. (s == nil and 'no value' or type(s)) .. ")", 2) end
  srand48(v >= 0 and floor(v) or -floor(-v))
end

-- ------------------------------------------------------------------ string.format with 64-bit %d

-- Lua here is a 32-bit build: its %d/%x/%o/%c/%i/%u go through a 32-bit long, Redis's through
-- a 64-bit one. Integer conversions of numbers outside 32 bits are formatted here instead.
local format0 = string.format
local function big_int_spec(flags, width, conv, v)
  local neg = v < 0
  local a = neg and -v or v
  a = a - fmod(a, 1)
  local digits
  if conv == 'd' or conv == 'i' or conv == 'u' then
    digits = format0('%.0f', a)
  else
    local base = (conv == 'o') and 8 or 16
    local d = {}
    if neg then a = 18446744073709551616 - a; neg = false end
    if a == 0 then d[1] = '0' end
    while a > 0 do
      local r = fmod(a, base)
      d[#d + 1] = ssub('0123456789abcdef', r + 1, r + 1)
      a = (a - r) / base
    end
    local rev = {}
    for i = #d, 1, -1 do rev[#rev + 1] = d[i] end
    digits = tconcat(rev)
    if conv == 'X' then digits = string.upper(digits) end
  end
  if neg then digits = '-' .. digits
  elseif sfind(flags, '+', 1, true) then digits = '+' .. digits
  elseif sfind(flags, ' ', 1, true) then digits = ' ' .. digits end
  local w = tonumber(width) or 0
  if #digits < w then
    if sfind(flags, '-', 1, true) then digits = digits .. string.rep(' ', w - #digits)
    elseif sfind(flags, '0', 1, true) then
      local sign = ''
      local c1 = ssub(digits, 1, 1)
      if c1 == '-' or c1 == '+' or c1 == ' ' then sign = c1; digits = ssub(digits, 2) end
      digits = sign .. string.rep('0', w - #digits - #sign) .. digits
    else digits = string.rep(' ', w - #digits) .. digits end
  end
  return digits
end
string.format = function(fmt, ...)
  local args = { ... }
  local n = select('#', ...)
  local need = false
  for i = 1, n do
    local a = args[i]
    if type(a) == 'number' and (a >= 2147483648 or a < -2147483648) then need = true break end
  end
  if not need or type(fmt) ~= 'string' then
    -- Called through pcall so that errors point at the script, as from the C function itself.
    local ok, r = pcall(format0, fmt, ...)
    if not ok then error((sgsub(r, "^bad argument #(%d+) to '%?'", "bad argument #%1 to 'format'")), 2) end
    return r
  end
  local out, ai, pos = {}, 0, 1
  while true do
    local s, e, flags, width, prec, conv = sfind(fmt, '%%([-+ #0]*)(%d*)(%.?%d*)([%a%%])', pos)
    if not s then out[#out + 1] = ssub(fmt, pos); break end
    out[#out + 1] = ssub(fmt, pos, s - 1)
    pos = e + 1
    if conv == '%' then out[#out + 1] = '%'
    else
      ai = ai + 1
      local a = args[ai]
      local na = tonumber(a)
      if (conv == 'd' or conv == 'i' or conv == 'u' or conv == 'x' or conv == 'X' or conv == 'o') and na
         and (na >= 2147483648 or na < -2147483648) and prec == '' then
        out[#out + 1] = big_int_spec(flags, width, conv, na)
      else
        out[#out + 1] = format0('%' .. flags .. width .. prec .. conv, a)
      end
    end
  end
  return tconcat(out)
end

-- ------------------------------------------------------------------ cjson / cmsgpack / struct / bit


local json_enc, json_dec = B.json_encode, B.json_decode
local cjson = { null = NULL }
function cjson.encode(...)
  if select('#', ...) ~= 1 then error("bad argument #1 to 'encode' (expected 1 argument)", 2) end
  local ok, r = json_enc(VIEW, NULL, (...))
  if not ok then error(r, 2) end
  return r
end
function cjson.decode(...)
  if select('#', ...) ~= 1 then error("bad argument #1 to 'decode' (expected 1 argument)", 2) end
  local s = ...
  if type(s) == 'number' then s = tostring(s) end
  if type(s) ~= 'string' then error("bad argument #1 to 'decode' (string expected, got " .. type(s) .. ")", 2) end
  local ok, v = json_dec(s)
  if not ok then error(v, 2) end
  return v
end
local cfg_bridge = B.json_config
for _, name in ipairs({ 'encode_keep_buffer', 'encode_max_depth', 'decode_max_depth', 'encode_number_precision',
                        'encode_sparse_array', 'encode_invalid_numbers', 'decode_invalid_numbers' }) do
  cjson[name] = function(...)
    local r = { cfg_bridge(name, serialise_any(...)) }
    if not r[1] then error(r[2], 2) end
    return unpack(r, 3, r[2] + 2)
  end
end
-- A new instance (Redis's is writable, unlike the global one).
function cjson.new()
  local c = {}
  for k, v in next, cjson do c[k] = v end
  return c
end
cjson._NAME, cjson._VERSION = 'cjson', '2.1.0'

local mp_pack, mp_unpack = B.mp_pack, B.mp_unpack
local cmsgpack = {
  _NAME = 'cmsgpack', _VERSION = 'lua-cmsgpack 0.4.0', _COPYRIGHT = 'Copyright (C) 2012, Salvatore Sanfilippo',
  _DESCRIPTION = 'MessagePack C implementation for Lua',
}
function cmsgpack.pack(...)
  if select('#', ...) == 0 then error("bad argument #0 to 'pack' (MessagePack pack needs input.)", 2) end
  local ok, r = mp_pack(VIEW, ...)
  if not ok then error(r, 2) end
  return r
end
local function mp_unpacker(name, mode)
  return function(s, a, b)
    -- luaL_checklstring: a number is taken as its text.
    if type(s) == 'number' then s = s .. ''
    elseif type(s) ~= 'string' then error("bad argument #1 to '" .. name .. "' (string expected, got " .. (s == nil and 'no value' or type(s)) .. ")", 2) end
    -- (Numbers go as they are: runtime.ts reads them in place, or as text without B.direct.)
    a, b = tonumber(a) or 0, tonumber(b) or 0
    if not DIRECT then a, b = sformat('%.17g', a), sformat('%.17g', b) end
    local r = { mp_unpack(s, mode, a, b) }
    if not r[1] then error(r[2], 2) end
    return unpack(r, 3, r[2] + 2)
  end
end
cmsgpack.unpack = mp_unpacker('unpack', 'all')
cmsgpack.unpack_one = mp_unpacker('unpack_one', 'one')
cmsgpack.unpack_limit = mp_unpacker('unpack_limit', 'limit')

local st_pack, st_unpack, st_size = B.struct_pack, B.struct_unpack, B.struct_size
local struct = {}
function struct.pack(fmt, ...)
  if type(fmt) ~= 'string' then error("bad argument #1 to 'pack' (string expected, got " .. (fmt == nil and 'no value' or type(fmt)) .. ")", 2) end
  local ok, r = st_pack(fmt, serialise_any(...))
  if not ok then error(r, 2) end
  return r
end
function struct.unpack(fmt, s, pos)
  if type(fmt) ~= 'string' then error("bad argument #1 to 'unpack' (string expected, got " .. (fmt == nil and 'no value' or type(fmt)) .. ")", 2) end
  if type(s) == 'number' then s = tostring(s) end
  if type(s) ~= 'string' then error("bad argument #2 to 'unpack' (string expected, got " .. (s == nil and 'no value' or type(s)) .. ")", 2) end
  local r = { st_unpack(fmt, s, sformat('%.17g', tonumber(pos) or 1)) }
  if not r[1] then error(r[2], 2) end
  return unpack(r, 3, r[2] + 2)
end
function struct.size(fmt)
  if type(fmt) ~= 'string' then error("bad argument #1 to 'size' (string expected, got " .. (fmt == nil and 'no value' or type(fmt)) .. ")", 2) end
  local ok, r = st_size(fmt)
  if not ok then error(r, 2) end
  return r
end

local bit_bridge = B.bit
local bit = {}
for _, op in ipairs({ 'tobit', 'bnot', 'band', 'bor', 'bxor', 'lshift', 'rshift', 'arshift', 'rol', 'ror', 'bswap', 'tohex' }) do
  bit[op] = function(...)
    local n = select('#', ...)
    local args = { ... }
    local minargs = (op == 'tobit' or op == 'bnot' or op == 'bswap' or op == 'tohex') and 1 or
                    ((op == 'band' or op == 'bor' or op == 'bxor') and 1 or 2)
    if n < minargs then n = minargs end
    for i = 1, n do
      local v = args[i]
      if op == 'tohex' and i == 2 and v == nil then break end
      local x = tonumber(v)
      if x == nil then
        error("bad argument #" .. i .. " to '" .. op .. "' (number expected, got " .. (v == nil and 'no value' or type(v)) .. ")", 2)
      end
      args[i] = sformat('%.17g', x)
    end
    local r = bit_bridge(op, unpack(args, 1, n))
    if op == 'tohex' then return r end
    return tonumber(r)
  end
end

-- ------------------------------------------------------------------ coroutines

-- debug.sethook's hook belongs to one thread (coroutines inherit the count, not the Lua hook):
-- a coroutine sets it as it starts, so that a loop inside one can still be stopped (Redis's C
-- hook is inherited).
local create, wrap = coroutine.create, coroutine.wrap
local function hooked(f)
  -- luaL_argcheck's refusal, at the caller's position and under the name it called us by.
  if type(f) ~= 'function' or getinfo(f, 'S').what == 'C' then
    local n = getinfo(2, 'n')
    error("bad argument #1 to '" .. tostring(n and n.name or '?') .. "' (Lua function expected)", 3)
  end
  return function(...)
    if armed then sethook(hook, '', 100000) else sethook(hook, 'l') end
    return f(...)
  end
end
coroutine.create = function(f)
  local co = create(hooked(f))
  return co
end
coroutine.wrap = function(f)
  local w = wrap(hooked(f))
  return w
end

-- ------------------------------------------------------------------ globals

-- Keep only what Redis 7.0 gives scripts.
local keep = {
  _G = true, _VERSION = true, assert = true, collectgarbage = true, coroutine = true, error = true,
  gcinfo = true, getmetatable = true, ipairs = true, load = true, loadstring = true, math = true,
  next = true, pairs = true, pcall = true, rawequal = true, rawget = true, rawset = true,
  select = true, setmetatable = true, string = true, table = true, tonumber = true, tostring = true,
  type = true, unpack = true, xpcall = true,
}
for k in pairs(G) do if not keep[k] then G[k] = nil end end

-- Read-only tables. Redis 7.0's patched Lua flags _G and every table reachable from it
-- read-only (lua_enablereadonlytable): no script can change what the next script sees. Stock
-- Lua has no such flag, so scripts see each of these tables through an empty proxy whose
-- __index is the real table and whose __newindex refuses; the functions that write tables
-- raw (rawset, table.insert, setmetatable) refuse proxies, and those that read raw (rawget,
-- next, pairs, getmetatable, table.foreach) read through them. Errors as Redis's: with the
-- script position from an assignment, without it from a C function.
local RO = 'Attempt to modify a readonly table'
local function ro_assign() error(RO, 2) end
local function protect(t, shown)
  local p = setmetatable({}, { __index = t, __newindex = ro_assign, __metatable = false })
  VIEW[p] = t
  SHOWN[p] = shown
  return p
end
local function guard(t, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end

-- Lua's argument errors, raised at the caller of the wrapper (as luaL_argerror from C).
local function typename(n, i, v) if n < i then return 'no value' end return type(v) end
local function argerr(i, fname, msg)
  error('bad argument #' .. i .. " to '" .. fname .. "' (" .. msg .. ')', 3)
end

local tinsert0 = table.insert
table.insert = function(...)
  local n = select('#', ...)
  local t, pos = ...
  if n == 2 and VIEW[t] == nil and type(t) == 'table' then return tinsert0(t, pos) end
  if type(t) ~= 'table' then argerr(1, 'insert', 'table expected, got ' .. typename(n, 1, t)) end
  if n == 3 then
    if tonumber(pos) == nil then argerr(2, 'insert', 'number expected, got ' .. type(pos)) end
  elseif n ~= 2 then
    error("wrong number of arguments to 'insert'", 2)
  end
  if VIEW[t] then error(RO, 0) end
  tinsert0(...)
end
table.foreach = function(...)
  local n = select('#', ...)
  local t, f = ...
  if type(t) ~= 'table' then argerr(1, 'foreach', 'table expected, got ' .. typename(n, 1, t)) end
  if type(f) ~= 'function' then argerr(2, 'foreach', 'function expected, got ' .. typename(n, 2, f)) end
  for k, v in next, VIEW[t] or t do
    local r = f(k, v)
    if r ~= nil then return r end
  end
end

-- string.rep: the count as Redis's 64-bit build takes it (the low 32 bits of the integer, so
-- 2^31 gives ''), and a result larger than REP_MAX (256 MB) is refused as a memory error instead of
-- filling the heap; a large one is made by concatenating pieces (memcpy speed, and the count
-- hook can stop the script meanwhile).
local srep0 = string.rep
local REP_MAX, REP_PIECE = 256 * 1024 * 1024, 65536
string.rep = function(...)
  local s, k = ...
  -- perf: the common small call costs two type checks on top of the C function.
  if type(k) == 'number' and k < 1024 and type(s) == 'string' and k * #s <= REP_PIECE then return srep0(s, k) end
  local n = select('#', ...)
  local ts = type(s)
  if ts ~= 'string' and ts ~= 'number' then argerr(1, 'rep', 'string expected, got ' .. typename(n, 1, s)) end
  k = tonumber(k)
  if k == nil then argerr(2, 'rep', 'number expected, got ' .. typename(n, 2, (select(2, ...)))) end
  if k >= 2147483648 or k < -2147483648 then
    if k >= 9223372036854775808 or k < -9223372036854775808 then k = 0
    else
      k = fmod(k - fmod(k, 1), 4294967296)
      if k < 0 then k = k + 4294967296 end
      if k >= 2147483648 then k = k - 4294967296 end
    end
  end
  local len = #tostring(s)
  if k * len <= REP_PIECE then
    local r = srep0(s, k)
    return r
  end
  k = k - fmod(k, 1)
  if k * len > REP_MAX then error('not enough memory', 0) end
  local per = floor(REP_PIECE / len) + 1
  local piece = srep0(s, per)
  local parts = {}
  for i = 1, floor(k / per) do parts[i] = piece end
  parts[#parts + 1] = srep0(s, fmod(k, per))
  return tconcat(parts)
end

G.rawset = function(...)
  local n = select('#', ...)
  local t, k, v = ...
  if type(t) ~= 'table' then argerr(1, 'rawset', 'table expected, got ' .. typename(n, 1, t)) end
  if n < 2 then argerr(2, 'rawset', 'value expected') end
  if n < 3 then argerr(3, 'rawset', 'value expected') end
  if VIEW[t] then error(RO, 0) end
  -- (Its own errors, a nil or NaN key, carry no position, from C as from here.)
  return rawset(t, k, v)
end
G.rawget = function(...)
  local n = select('#', ...)
  local t, k = ...
  if type(t) ~= 'table' then argerr(1, 'rawget', 'table expected, got ' .. typename(n, 1, t)) end
  if n < 2 then argerr(2, 'rawget', 'value expected') end
  return rawget(VIEW[t] or t, k)
end
G.next = function(...)
  local t, k = ...
  if type(t) ~= 'table' then argerr(1, 'next', 'table expected, got ' .. typename(select('#', ...), 1, t)) end
  return next(VIEW[t] or t, k)
end
-- pairs hands out the C next: a loop over a table costs what it did.
G.pairs = function(...)
  local t = ...
  if type(t) ~= 'table' then argerr(1, 'pairs', 'table expected, got ' .. typename(select('#', ...), 1, t)) end
  return next, VIEW[t] or t, nil
end
local string_mt = getmetatable('')
local string_mt_shown
G.getmetatable = function(...)
  if select('#', ...) == 0 then argerr(1, 'getmetatable', 'value expected') end
  local x = ...
  if VIEW[x] then return SHOWN[x] end
  local m = getmetatable(x)
  if m == string_mt then return string_mt_shown end
  return m
end
G.setmetatable = function(...)
  local n = select('#', ...)
  local t, mt = ...
  if type(t) ~= 'table' then argerr(1, 'setmetatable', 'table expected, got ' .. typename(n, 1, t)) end
  local mtt = type(mt)
  if n < 2 or (mtt ~= 'nil' and mtt ~= 'table') then argerr(2, 'setmetatable', 'nil or table expected') end
  if VIEW[t] then error(RO, 0) end
  local cur = getmetatable(t)
  if cur == nil then return setmetatable(t, mt) end
  -- A __metatable field hides the metatable: only trying tells it from a plain metatable.
  if type(cur) ~= 'table' or rawget(cur, '__metatable') ~= nil or not pcall0(setmetatable, t, mt) then
    error('cannot change a protected metatable', 2)
  end
  return t
end

G.redis, G.cjson, G.cmsgpack, G.struct, G.bit = redis, cjson, cmsgpack, struct, bit
for _, name in ipairs({ 'string', 'math', 'table', 'coroutine', 'redis', 'cjson', 'cmsgpack', 'struct', 'bit' }) do
  G[name] = protect(G[name])
end
string_mt_shown = protect({ __index = G.string })

-- Redis's pcall: an error table raised by redis.call comes back as its err string.
local function pack_n(...) return select('#', ...), { ... } end
G.pcall = function(...)
  if select('#', ...) == 0 then return false, 'attempt to call a boolean value' end
  local n, r = pack_n(pcall0(...))
  if r[1] then return unpack(r, 1, n) end
  local e = r[2]
  if type(e) == 'table' then
    local m = e.err
    if type(m) == 'string' or type(m) == 'number' then e = m end
  end
  return false, e
end
G.__redis__err__handler = errh

-- The globals: reading a missing name fails like Redis's protected globals; scripts see G
-- through ENV, a proxy like the others (its __index becomes the load API while a library loads).
setmetatable(G, { __index = guard })
local ENV_MT = { __index = G, __newindex = ro_assign, __metatable = false }
local ENV = setmetatable({}, ENV_MT)
VIEW[ENV] = G
SHOWN[ENV] = protect({ __index = guard })
G._G = ENV

-- Function libraries have globals of their own, as in Redis 7.0 (its functions have a Lua state
-- apart from EVAL's): the same names but KEYS, ARGV and __redis__err__handler. FENV is the
-- proxy they see (its __index becomes the load API while a library loads).
local FG = setmetatable({}, { __index = guard })
local FENV_MT = { __index = FG, __newindex = ro_assign, __metatable = false }
local FENV = setmetatable({}, FENV_MT)
VIEW[FENV] = FG
SHOWN[FENV] = SHOWN[ENV]

-- Binary chunks are refused (Redis's Lua has bytecode loading removed); loaded code runs in the
-- caller's globals.
G.loadstring = function(s, name)
  if type(s) == 'string' and sbyte(s, 1) == 27 then return nil, 'binary chunks are not allowed' end
  local f, e = loadstring0(s, name)
  if f then setfenv(f, getfenv(2) == FENV and FENV or ENV) end
  return f, e
end
G.load = function(...)
  local fn, name = ...
  if type(fn) ~= 'function' then argerr(1, 'load', 'function expected, got ' .. typename(select('#', ...), 1, fn)) end
  local parts = {}
  while true do
    local p = fn()
    if p == nil or p == '' then break end
    if type(p) ~= 'string' then return nil, 'reader function must return a string' end
    parts[#parts + 1] = p
  end
  local f, e = G.loadstring(tconcat(parts), name or '=(load)')
  if f and getfenv(2) == FENV then setfenv(f, FENV) end
  return f, e
end

-- KEYS and ARGV are not there yet (run_eval sets them in G).
for k, v in next, G do if k ~= '__redis__err__handler' then FG[k] = v end end
FG._G = FENV

-- ------------------------------------------------------------------ running scripts

local check_bridge = B.check
-- The count hook stays set between runs (setting it costs as much as a small script): it only
-- ever acts on user code. armed: it is the count hook (a kill turns it into a line hook).
armed = false
local function arm()
  if not armed then
    sethook(hook, '', 100000)
    armed = true
  end
end
hook = function()
  -- Only user code is interrupted; the runtime's own code and the value chunks pushed by
  -- runtime.ts must finish.
  local i = getinfo(2, 'S')
  if i then
    local src = i.source
    if src == RUNTIME or src == '=reply' then return end
  end
  local why = check_bridge()
  if why then
    -- As Redis: keep failing on every line so pcall cannot swallow the kill.
    sethook(hook, 'l')
    armed = false
    error(err_table(why == 't' and 'FUNCTION LOAD timeout' or KILLED), 0)
  end
end

-- Compile-time preparation of a script or library function: run in ENV.
R.__prep = function(f) setfenv(f, ENV) return f end

-- "script: <name>" of error replies: set by runtime.ts when it changes.
local run_name = ''
R.__set_name = function(n) run_name = n end

-- A run's result serialised (__finish: runtime.ts reads strings, numbers and plain arrays
-- itself and gives the rest to this).
local function ser_result(res)
  local out = {}
  local n = ser_resp(res, out, 0, 1)
  return tconcat(out, '', 1, n)
end
local function finish(res)
  if type(res) ~= 'table' then return ser_result(res) end
  -- Only a table can fail to serialise (too deep): as an error of the run itself.
  local ok, r = pcall0(ser_result, res)
  if ok then return r end
  local msg = 'ERR Error running script ' .. run_name .. ', ' .. ssub(tostring(r), 1, 100)
  return 'e' .. #msg .. ':' .. msg
end

-- The reply of a run that raised: res is the error table from errh (or a string: memory
-- error, error in the error handler).
R.__run_error = function(res)
  local name = run_name
  if type(res) ~= 'table' then
    local m = 'execution failure'
    if type(res) == 'string' or type(res) == 'number' then m = tostring(res) end
    local msg = 'ERR Error running script ' .. name .. ', ' .. ssub(m, 1, 100)
    return 'e' .. #msg .. ':' .. msg
  end
  local e = rawget(res, 'err')
  local msg = tostring(e)
  local src, line = rawget(res, 'source'), rawget(res, 'line')
  if src ~= nil and line ~= nil then
    msg = msg .. ' script: ' .. name .. ', on ' .. tostring(src) .. ':' .. tostring(line) .. '.'
  end
  return (rawget(res, 'ignore_err_stats_update') and 'E' or 'e') .. #msg .. ':' .. msg
end
R.__errh = errh
R.__finish = finish
R.__ser_any = serialise_any
-- A number result serialised, for a runtime that cannot read it in place (runtime.ts).
R.__ser_num = function(v) return 'n' .. sformat('%.17g', v) .. ';' end

-- math.random's state as the last run started: a script moved to the other Lua state
-- (runtime.ts) is run again from there.
local start_h, start_l = 0, 0
R.__rand_get = function(which)
  if which == 'start' then return sformat('%.17g,%.17g', start_h, start_l) end
  return sformat('%.17g,%.17g', rh, rl)
end
R.__rand_set = function(s)
  local h, l = string.match(s, '^([^,]+),(.+)$')
  rh, rl = tonumber(h), tonumber(l)
end

-- The runners. runtime.ts calls one with lua_pcall and errh as the error handler (one protected
-- call per run); each returns the script's result alone, and runtime.ts reads it by its type
-- (a string or a number in place, a table from the stack or through __finish, anything else
-- through __finish); __run_error makes the reply of a run that raised. perf: every run goes
-- through here, so KEYS and ARGV come as the runner's arguments in the shape that builds them
-- cheapest: __run_<eval|fn><nk> (f, KEYS..., ARGV...) for numkeys 0 to 2, __run_<eval|fn>n (f,
-- nk, KEYS..., ARGV...) with nk a decimal string, and __run_<eval|fn>t (f, KEYS, ARGV) with the
-- tables built by runtime.ts (many or long arguments). Each is written out whole (RUNNERS): no
-- Lua call between it and the script.
local function split(nk, ...)
  local keys, argv = { ... }, {}
  nk = nk + 0
  for i = nk + 1, #keys do
    argv[i - nk] = keys[i]
    keys[i] = nil
  end
  return keys, argv
end
${RUNNERS}
-- ------------------------------------------------------------------ function libraries

-- FUNCTION LOAD runs the library code in an environment holding only a restricted redis table.
local FLAGS = { ['no-writes'] = true, ['allow-oom'] = true, ['allow-stale'] = true, ['no-cluster'] = true, ['allow-cross-slot-keys'] = true }
local function valid_name(s)
  return type(s) == 'string' and #s > 0 and not sfind(s, '[^%w_]')
end
local registering = nil
local function register_function(...)
  local n = select('#', ...)
  local name, cb, flags, desc
  if n == 1 then
    local t = ...
    if type(t) ~= 'table' then
      raise('calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).')
    end
    for k, v in pairs(t) do
      if k == 'function_name' then
        if type(v) ~= 'string' then raise('function_name argument given to redis.register_function must be a string') end
        name = v
      elseif k == 'callback' then
        if type(v) ~= 'function' then raise('callback argument given to redis.register_function must be a function') end
        cb = v
      elseif k == 'flags' then
        if type(v) ~= 'table' then raise('flags argument to redis.register_function must be a table representing function flags') end
        flags = v
      elseif k == 'description' then
        if type(v) == 'number' then v = tostring(v) end
        if type(v) ~= 'string' then raise('description argument given to redis.register_function must be a string') end
        desc = v
      else
        raise('unknown argument given to redis.register_function')
      end
    end
    if name == nil then raise('redis.register_function must get a function name argument') end
    if cb == nil then raise('redis.register_function must get a callback argument') end
  elseif n == 2 then
    name, cb = ...
    if type(name) == 'number' then name = tostring(name) end
    if type(name) ~= 'string' then raise('first argument to redis.register_function must be a string') end
    if type(cb) ~= 'function' then raise('second argument to redis.register_function must be a function') end
  else
    raise('wrong number of arguments to redis.register_function')
  end
  local fl = {}
  if flags then
    local j = 1
    while true do
      local f = rawget(flags, j)
      if f == nil then break end
      if type(f) ~= 'string' or not FLAGS[f] then raise('unknown flag given') end
      fl[#fl + 1] = f
      j = j + 1
    end
  end
  if not valid_name(name) then
    raise('Library names can only contain letters, numbers, or underscores(_) and must be at least one character long')
  end
  if registering.byname[name] then raise('Function already exists in the library') end
  local fn = { name = name, cb = cb, flags = fl, desc = desc }
  registering.byname[name] = fn
  registering.list[#registering.list + 1] = fn
end

local load_redis = protect(setmetatable({
  register_function = register_function, log = redis.log,
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REDIS_VERSION = redis.REDIS_VERSION, REDIS_VERSION_NUM = redis.REDIS_VERSION_NUM,
}, { __index = guard }))
local LOAD_API = setmetatable({ redis = load_redis }, { __index = guard })

-- Libraries by name: { name, fns = { [fname] = fn } }.
local libs = {}
R.__libs = libs

-- Run a compiled library chunk; returns the serialised registrations or an error message.
R.__load_lib = function(chunk)
  setfenv(chunk, FENV)
  registering = { byname = {}, list = {} }
  -- As Redis: while the library loads, globals resolve to the load API only.
  FENV_MT.__index = LOAD_API
  arm()
  local ok, err = xpcall(chunk, function(e)
    if type(e) == 'table' then return rawget(e, 'err') end
    return 'ERR ' .. tostring(e)
  end)
  FENV_MT.__index = FG
  local reg = registering
  registering = nil
  if not ok then return 'E' .. tostring(err) end
  local out = {}
  for _, fn in ipairs(reg.list) do
    out[#out + 1] = #fn.name .. ':' .. fn.name
    local d = fn.desc or ''
    out[#out + 1] = (fn.desc and 'd' or 'n') .. #d .. ':' .. d
    out[#out + 1] = #fn.flags .. ':' .. tconcat(fn.flags, ',') .. ';'
  end
  R.__pending = reg
  return 'O' .. #reg.list .. ';' .. tconcat(out)
end

-- Commit the pending registrations as library <name>.
R.__commit_lib = function(name)
  local fns = {}
  for _, fn in ipairs(R.__pending.list) do fns[fn.name] = fn.cb end
  libs[name] = fns
  R.__pending = nil
end

R.__drop_pending = function() R.__pending = nil end
R.__delete_lib = function(name) libs[name] = nil end
R.__get_fn = function(lib, fname) return libs[lib][fname] end

collectgarbage('restart')
`;

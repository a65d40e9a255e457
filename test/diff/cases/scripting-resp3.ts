/**
 * Lua and RESP3 (redis.setresp, Redis's RESP3 <-> Lua conversion rules) for EVAL and FCALL.
 * The corpus runs over RESP2 and over RESP3 connections: both conversions of each script's
 * reply (a map to a RESP2 caller, a boolean to a RESP3 caller...) are compared with Redis.
 */
import type { Script } from '../harness.js';

const E = (body: string, ...keys: string[]) => ['EVAL', body, String(keys.length), ...keys];
const R3 = 'redis.setresp(3); ';

const scripts: Script[] = [
  { name: 'RESP3 replies of redis.call become Redis\'s Lua tables', steps: [
    ['HSET', 'h', 'a', '1', 'b', '2'], ['SADD', 's', 'x'], ['ZADD', 'z', '1.5', 'm', '2', 'n'],
    E(R3 + "return redis.call('hgetall', KEYS[1])", 'h'),
    E(R3 + "local r = redis.call('hgetall', KEYS[1]); return {r.map.a, r.map.b, type(r.map)}", 'h'),
    E(R3 + "return redis.call('smembers', KEYS[1])", 's'),
    E(R3 + "local r = redis.call('smembers', KEYS[1]); return tostring(r.set.x)", 's'),
    E(R3 + "return redis.call('zscore', KEYS[1], 'm')", 'z'),
    E(R3 + "local d = redis.call('zscore', KEYS[1], 'm'); return type(d) .. ':' .. tostring(d.double)", 'z'),
    E(R3 + "return redis.call('zrange', KEYS[1], 0, -1, 'withscores')", 'z'),
    E(R3 + "local v = redis.call('get', 'nokey'); return {type(v), tostring(v)}"),
    E("local v = redis.call('get', 'nokey'); return {type(v), tostring(v)}"),
    E(R3 + "return {redis.call('get', 'nokey'), 1, 2}"),
    E(R3 + "return redis.call('hgetall', 'nokey')"),
    E(R3 + "return redis.call('config', 'get', 'maxmemory')"),
    E(R3 + "return redis.call('zpopmin', KEYS[1], 1)", 'z'),
    E(R3 + "redis.setresp(2); return redis.call('hgetall', KEYS[1])", 'h'),
    E(R3 + "return redis.call('lpop', 'nolist', 2)"),
  ] },
  { name: 'Lua tables become RESP3 types (rendered for the caller\'s protocol)', steps: [
    E('return {double=1.5}'), E('return {double=3}'), E("return {double='x'}"), E("return {big_number='12345678901234567890'}"),
    E("return {big_number='1\\r\\n2'}"), E("return {map={a=1}}"), E("return {set={a=true}}"), E("return {map={}}"),
    E("return {verbatim_string={format='txt', string='hello'}}"), E("return {verbatim_string={format='txt'}}"),
    E('return {1, {double=0.25}, {map={k={set={z=1}}}}}'), E('return {double=1/0}'), E('return {double=-1/0}'),
  ] },
  { name: 'booleans and nil follow the script\'s protocol', steps: [
    E('return true'), E('return false'), E('return nil'), E('return {true, false, 1}'),
    E(R3 + 'return true'), E(R3 + 'return false'), E(R3 + 'return nil'), E(R3 + 'return {true, false, 1}'),
    E(R3 + "return redis.call('exists', 'nokey') == 0"),
  ] },
  { name: 'redis.setresp errors; every run starts in RESP2', steps: [
    E('redis.setresp(4)'), E('redis.setresp()'), E('redis.setresp(2, 3)'), E("redis.setresp('3'); return true"),
    E(R3 + 'return 1'), E('return false'),
  ] },
  { name: 'FCALL with redis.setresp(3)', steps: [
    ['FUNCTION', 'LOAD', 'REPLACE', "#!lua name=r3lib\nredis.register_function('r3', function(keys, args) redis.setresp(3) return redis.call('hgetall', keys[1]) end)\nredis.register_function('r3b', function(keys, args) redis.setresp(3) return {true, {double=2.5}} end)"],
    ['HSET', 'h', 'f', 'v'], ['FCALL', 'r3', '1', 'h'], ['FCALL', 'r3b', '0'], ['FUNCTION', 'DELETE', 'r3lib'],
  ] },
];
export default scripts;

/**
 * Strings here are latin1 byte strings (as argv.key returns them), so names, passwords and
 * patterns are exact bytes.
 *
 * ACL users, as Redis 7 models them: on/off, passwords (SHA-256), a root selector and
 * further selectors "(...)". A selector holds command permissions as a bit per command row
 * (top-level and subcommand; also Redis 7.0.15's rows we do not implement, so that rules about
 * them behave and show as in Redis), key patterns with read/write flags (~, %R~, %W~, %RW~) and
 * channel patterns. A command runs when one selector allows all of it (command, every key
 * with the access its key specs need, every channel). As in Redis 7.0, the bits are the truth:
 * the rule text shown by ACL LIST / GETUSER is worked out from them (describeCommands: the
 * categories that fit best, then single commands), not kept as typed.
 *
 * "+cmd|arg" on a command without subcommands (SELECT, DEBUG...) allows that command only when
 * its first argument is `arg` (Redis's allowed_firstargs), while its bit stays off.
 *
 * Hot path: `user.unrestricted` is true for a user whose root selector may run everything on
 * every key and channel (the default user), so the dispatcher pays one boolean test per command.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Argv } from '../resp/argv.js';
import type { CommandDef } from './command.js';
import type { Registry } from './registry.js';
import { F, ACL_CATEGORIES, type AclCategory } from './flags.js';
import { globMatch } from './glob.js';
import { KF, KEY_MODE, KeyList, findKeys } from './keys.js';
import type { PubSub } from './pubsub.js';
import { cstr } from '../bytes.js';
import { splitArgs } from '../config-file.js';
import { REDIS_ACL_ROWS } from './acl-redis-rows.js';

const KEY_READ = 1;
const KEY_WRITE = 2;

export interface KeyPattern {
  readonly pattern: Buffer;
  flags: number; // KEY_READ | KEY_WRITE
  /** perf: for "<literal>*" patterns the literal's length (a prefix test), else -1. */
  readonly prefix: number;
}

/** A key pattern with its match shortcut. */
export function keyPattern(pattern: Buffer, flags: number): KeyPattern {
  return { pattern, flags, prefix: literalStar(pattern) };
}

/** What a selector allows: commands, keys, channels. The user itself is its root selector. */
export class AclSelector {
  /** allowed[id] = 1 when the command row with that id may run. */
  allowed: Uint8Array;
  /**
   * Redis's reserved "future commands" bit: set by +@all / allcommands and cleared only by
   * -@all / nocommands, so "+@all -get" is described from +@all.
   */
  allCommands = false;
  /** "+select|0": the first arguments allowed for a command whose bit is off, by row id. */
  firstArgs: Map<number, string[]> | null = null;
  /** perf: describeCommands' text, until a command rule changes the selector (null). */
  described: string | null = null;
  allKeys = false;
  keys: KeyPattern[] = [];
  allChannels = false;
  channels: Buffer[] = [];

  constructor(size: number) {
    this.allowed = new Uint8Array(size);
  }

  copyFrom(from: AclSelector): void {
    this.allowed = Uint8Array.from(from.allowed);
    this.allCommands = from.allCommands;
    this.firstArgs = from.firstArgs === null ? null : new Map([...from.firstArgs].map(([id, a]) => [id, [...a]]));
    this.described = from.described;
    this.allKeys = from.allKeys;
    this.keys = from.keys.map((k) => keyPattern(k.pattern, k.flags));
    this.allChannels = from.allChannels;
    this.channels = [...from.channels];
  }
}

export class AclUser extends AclSelector {
  enabled = false;
  nopass = false;
  sanitizePayload = false;
  readonly passwords = new Set<string>();
  /** The selectors after the root one, in the order they were added. */
  selectors: AclSelector[] = [];
  unrestricted = false;

  constructor(readonly name: string, size: number) {
    super(size);
  }

  refresh(): void {
    // allCommands stays set by "+@all -@dangerous": the bits say whether every command runs.
    this.unrestricted = this.allKeys && this.allChannels && this.allowed.every((b) => b === 1);
  }

  /** Make this user a copy of `from` (ACL SETUSER applies rules to a scratch copy first). */
  copyUser(from: AclUser): void {
    this.copyFrom(from);
    this.enabled = from.enabled;
    this.nopass = from.nopass;
    this.sanitizePayload = from.sanitizePayload;
    this.passwords.clear();
    for (const p of from.passwords) this.passwords.add(p);
    this.selectors = from.selectors.map((s) => {
      const c = new AclSelector(s.allowed.length);
      c.copyFrom(s);
      return c;
    });
    this.refresh();
  }
}

/** Why a command was refused (Redis's ACL_DENIED_*; larger wins when selectors disagree). */
export const DENIED_CMD = 1;
export const DENIED_KEY = 2;
export const DENIED_CHANNEL = 4;
export type AclDenial = { reason: 'command' | 'key' | 'channel'; index: number };

export class AclError extends Error {}

/**
 * The users as persisted with the data (src/store, record 'acl'): what ACL SETUSER set, by
 * name (command rules as text, so that rows added by a later version are placed by name).
 */
export interface SavedSelector {
  allCommands: boolean;
  /** The rules after +@all / -@all that rebuild the bits (describeCommands, or as typed in older data). */
  rules: string[];
  allKeys: boolean;
  keys: [pattern: string, flags: number][];
  allChannels: boolean;
  channels: string[];
}

export interface SavedUser extends SavedSelector {
  name: string;
  enabled: boolean;
  nopass: boolean;
  sanitizePayload: boolean;
  passwords: string[];
  /** Selectors after the root one (absent in data written before selectors existed). */
  selectors?: SavedSelector[];
}

export interface SavedAcl {
  users: SavedUser[];
  /** Tokens minted by ACL RESTTOKEN: [token, user name]. */
  restTokens: [string, string][];
}

/** SHA-256 hex of a password given as bytes or as a latin1 byte string (argv.key). */
export function hashPassword(p: string | Buffer): string {
  return createHash('sha256').update(typeof p === 'string' ? Buffer.from(p, 'latin1') : p).digest('hex');
}

export class Acl {
  readonly users = new Map<string, AclUser>();
  /** REST tokens minted by ACL RESTTOKEN: token -> user name. */
  readonly restTokens = new Map<string, string>();
  /** Called when a user is deleted or changed so its connections can be closed (ACL DELUSER). */
  onUserDeleted: ((name: string) => void) | null = null;
  readonly log: AclLogEntry[] = [];

  constructor(private readonly reg: Registry) {
    const d = this.create('default');
    this.apply(d, ['on', 'nopass', '~*', '&*', '+@all']);
  }

  get defaultUser(): AclUser {
    return this.users.get('default')!;
  }

  /** A new user as ACL SETUSER creates it: off, no keys, no channels, no commands. */
  create(name: string): AclUser {
    const u = new AclUser(name, this.table().size);
    this.users.set(name, u);
    return u;
  }

  /** requirepass: the default user's password (empty = nopass), as Redis does. */
  setDefaultPassword(pass: string): void {
    const d = this.defaultUser;
    const bytes = Buffer.from(pass, 'utf8').toString('latin1'); // config values are UTF-8 text
    this.apply(d, pass === '' ? ['nopass'] : ['resetpass', '>' + bytes]);
  }

  /** True when a connection must authenticate before running commands. */
  authRequired(): boolean {
    const d = this.defaultUser;
    return !d.nopass || !d.enabled;
  }

  /** AUTH / HELLO AUTH: the user when the credentials are right, else null. */
  authenticate(name: string, pass: string | Buffer): AclUser | null {
    const u = this.users.get(name);
    if (u === undefined || !u.enabled) return null;
    if (u.nopass) return u;
    return u.passwords.has(hashPassword(pass)) ? u : null;
  }

  /** Apply ACL SETUSER rules in order; throws AclError with Redis's message on the first bad one. */
  apply(u: AclUser, rules: readonly string[]): void {
    for (const r of rules) {
      const err = this.applyOne(u, r);
      // Redis formats the rule with %s: a NUL byte ends it.
      if (err !== null) throw new AclError(`Error in ACL SETUSER modifier '${cstr(r)}': ${err}`);
    }
    u.refresh();
  }

  private applyOne(u: AclUser, op: string): string | null {
    if (op === '') return null; // Redis: an empty rule does nothing
    // Keywords are compared as C strings (strcasecmp): "on\0x" is "on".
    switch (asciiLower(cstr(op))) {
      case 'on': u.enabled = true; return null;
      case 'off': u.enabled = false; return null;
      case 'nopass': u.nopass = true; u.passwords.clear(); return null;
      case 'resetpass': u.nopass = false; u.passwords.clear(); return null;
      case 'sanitize-payload': u.sanitizePayload = true; return null;
      case 'skip-sanitize-payload': u.sanitizePayload = false; return null;
      case 'clearselectors': u.selectors = []; return null;
      case 'reset':
        for (const x of ['resetpass', 'resetkeys', 'resetchannels', 'off', 'clearselectors', 'sanitize-payload', '-@all']) this.applyOne(u, x);
        return null;
    }
    const c0 = op[0];
    if (c0 === '>') { u.passwords.add(hashPassword(op.slice(1))); u.nopass = false; return null; }
    if (c0 === '#') {
      const h = op.slice(1);
      if (!/^[0-9a-f]{64}$/.test(h)) return 'The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters';
      u.passwords.add(h); u.nopass = false; return null;
    }
    if (c0 === '<') {
      const h = hashPassword(op.slice(1));
      if (!u.passwords.delete(h)) return 'The password you are trying to remove from the user does not exist';
      return null;
    }
    if (c0 === '!') {
      if (!u.passwords.delete(op.slice(1))) return 'The password you are trying to remove from the user does not exist';
      return null;
    }
    if (c0 === '(' && op.endsWith(')')) {
      // Redis's ACLCreateSelectorFromOpSet: a new selector from the rules inside.
      // The rules inside are split as sdssplitargs does (quotes allowed); unbalanced quotes
      // give Redis's empty selector.
      const sel = new AclSelector(this.table().size);
      for (const r of splitArgs(cstr(op.slice(1, -1))) ?? []) {
        const err = this.applySelector(sel, r);
        if (err !== null) return err;
      }
      u.selectors.push(sel);
      return null;
    }
    return this.applySelector(u, op);
  }

  /** Redis's ACLSetSelector: one rule about commands, keys or channels. */
  private applySelector(s: AclSelector, op: string): string | null {
    switch (asciiLower(cstr(op))) {
      case 'allkeys': case '~*': s.allKeys = true; s.keys = []; return null;
      case 'resetkeys': s.allKeys = false; s.keys = []; return null;
      case 'allchannels': case '&*': s.allChannels = true; s.channels = []; return null;
      case 'resetchannels': s.allChannels = false; s.channels = []; return null;
      case 'allcommands': case '+@all':
        s.allowed.fill(1); s.allCommands = true; s.firstArgs = null; s.described = null; return null;
      case 'nocommands': case '-@all':
        s.allowed.fill(0); s.allCommands = false; s.firstArgs = null; s.described = null; return null;
    }
    const c0 = op[0];
    if (c0 === '~' || c0 === '%') {
      if (s.allKeys) return `Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns`;
      let flags = KEY_READ | KEY_WRITE;
      let at = 1;
      if (c0 === '%') {
        flags = 0;
        for (; at < op.length; at++) {
          const ch = op[at];
          if ((ch === 'R' || ch === 'r') && !(flags & KEY_READ)) flags |= KEY_READ;
          else if ((ch === 'W' || ch === 'w') && !(flags & KEY_WRITE)) flags |= KEY_WRITE;
          else if (ch === '~') { at++; break; }
          else return 'Syntax error';
        }
        if (flags === 0) return 'Syntax error';
      }
      if (hasSpaces(op, at)) return 'Syntax error';
      const b = Buffer.from(op.slice(at), 'latin1');
      // The same pattern again widens its flags (Redis's listSearchKey on the pattern text).
      const same = s.keys.find((k) => k.pattern.equals(b));
      if (same !== undefined) same.flags |= flags;
      else s.keys.push(keyPattern(b, flags));
      return null;
    }
    if (c0 === '&') {
      if (s.allChannels) return `Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels`;
      if (hasSpaces(op, 1)) return 'Syntax error';
      const b = Buffer.from(op.slice(1), 'latin1');
      if (!s.channels.some((p) => p.equals(b))) s.channels.push(b);
      return null;
    }
    if (c0 === '+' || c0 === '-') return this.applyCommandRule(s, cstr(op));
    return 'Syntax error';
  }

  /**
   * Redis's ACLSetSelector for "+name", "-name", "+@cat", "-@cat" and "+name|arg". The name is a
   * C string there (cut at a NUL), looked up case-insensitively.
   */
  private applyCommandRule(s: AclSelector, op: string): string | null {
    s.described = null;
    const allow = op[0] === '+' ? 1 : 0;
    if (op[1] === '@') {
      const cat = ACL_CATEGORIES.indexOf(asciiLower(op.slice(2)) as AclCategory);
      if (cat < 0) return UNKNOWN;
      for (const def of this.table().apply[cat]) changePerm(s, def, allow);
      return null;
    }
    const bar = op.lastIndexOf('|');
    if (allow === 0 || bar < 0) {
      const def = this.lookupCommand(op.slice(1));
      if (def === undefined) return UNKNOWN;
      changePerm(s, def, allow);
      return null;
    }
    // "+name|x": a subcommand when name has subcommands, else an allowed first argument.
    const def = this.lookupCommand(op.slice(1, bar));
    if (def === undefined) return UNKNOWN;
    if (def.name.includes('|')) return 'Allowing first-arg of a subcommand is not supported';
    const arg = op.slice(bar + 1);
    if (arg === '') return 'Syntax error';
    if (def.subcommands !== undefined) {
      const sub = def.subcommands.get(asciiLower(arg));
      if (sub === undefined) return UNKNOWN;
      changePerm(s, sub, 1);
      return null;
    }
    // Redis keeps the first spelling; later ones that differ only in case are the same.
    s.firstArgs ??= new Map();
    const list = s.firstArgs.get(def.id);
    const low = asciiLower(arg);
    if (list === undefined) s.firstArgs.set(def.id, [arg]);
    else if (!list.some((a) => asciiLower(a) === low)) list.push(arg);
    return null;
  }

  /** Redis's lookupCommandBySdsLogic (strict): "name" or "name|sub", any case. */
  private lookupCommand(name: string): AclRow | undefined {
    const parts = asciiLower(name).split('|');
    if (parts.length > 2) return undefined;
    const def = this.table().tops.get(parts[0]);
    if (parts.length === 1 || def === undefined) return def;
    return def.subcommands?.get(parts[1]);
  }

  /**
   * The rows command rules act on: ours, then Redis 7.0.15's rows we do not implement
   * (REDIS_ACL_ROWS; "+cluster" works as in Redis and shows in ACL LIST, yet nothing runs).
   * Per category (ACL_CATEGORIES order): `apply`, the rows a category rule changes (a container
   * takes all its subcommands along, as Redis's ACLChangeSelectorPerm does), and `count`, the
   * rows Redis counts when it describes rules (only its own).
   */
  private table(): AclTable {
    if (this.tbl !== null) return this.tbl;
    const redis = new Map<string, number>();
    for (const line of REDIS_ACL_ROWS) {
      for (const item of line.split(' ')) {
        const at = item.lastIndexOf(':');
        redis.set(item.slice(0, at), parseInt(item.slice(at + 1), 36));
      }
    }
    const tops = new Map<string, AclRow>();
    const apply: AclRow[][] = ACL_CATEGORIES.map(() => []);
    const count: AclRow[][] = ACL_CATEGORIES.map(() => []);
    const place = (row: AclRow, cats: readonly AclCategory[]) => {
      for (const c of cats) {
        const j = ACL_CATEGORIES.indexOf(c);
        apply[j].push(row);
        if (redis.has(row.name)) count[j].push(row);
      }
    };
    for (const def of this.reg.commands.values()) {
      tops.set(def.name, def);
      place(def, this.reg.categories(def));
      if (def.subcommands) for (const sub of def.subcommands.values()) place(sub, this.reg.categories(sub));
    }
    let size = this.reg.all.length;
    const catsOf = (mask: number) => ACL_CATEGORIES.filter((_, j) => mask & (1 << j));
    for (const [name, mask] of redis) {
      if (name.includes('|') || tops.has(name)) continue;
      const row: { name: string; id: number; subcommands?: Map<string, AclRow> } = { name, id: size++ };
      tops.set(name, row);
      place(row, catsOf(mask));
      for (const [sub, subMask] of redis) {
        if (!sub.startsWith(name + '|')) continue;
        const r = { name: sub, id: size++ };
        (row.subcommands ??= new Map()).set(sub.slice(name.length + 1), r);
        place(r, catsOf(subMask));
      }
    }
    this.tbl = { size, tops, apply, count };
    return this.tbl;
  }
  private tbl: AclTable | null = null;

  /** The command rules as ACL LIST and GETUSER show them. */
  describeCommands(s: AclSelector): string {
    return (s.described ??= [s.allCommands ? '+@all' : '-@all', ...this.commandRules(s)].join(' '));
  }

  /**
   * Redis 7.0's ACLDescribeSelectorCommandRules: from +@all (when the future-commands bit is
   * set) or -@all, repeatedly the category that fits the remaining bits best (more rows agree
   * than differ; fewest differences, then most agreements; ties to the earlier category), then
   * the single commands and subcommands still different, then allowed first arguments. Redis
   * walks its command dict in hash order (random per process) for the single commands; we
   * walk the table's order.
   */
  private commandRules(s: AclSelector): string[] {
    const additive = !s.allCommands;
    const rules: string[] = [];
    const fake = new Uint8Array(s.allowed.length).fill(additive ? 0 : 1);
    // What is left to explain: categories applied are undone here.
    const temp = Uint8Array.from(s.allowed);
    const { tops, apply, count } = this.table();
    const applied = new Uint8Array(ACL_CATEGORIES.length);
    for (;;) {
      let best = -1;
      let minDiff = Infinity;
      let maxSame = 0;
      for (let j = 0; j < ACL_CATEGORIES.length; j++) {
        if (applied[j]) continue;
        let on = 0;
        for (const def of count[j]) on += temp[def.id];
        const off = count[j].length - on;
        const diff = additive ? off : on;
        const same = additive ? on : off;
        if (same > diff && (diff < minDiff || (diff === minDiff && same > maxSame))) {
          best = j;
          minDiff = diff;
          maxSame = same;
        }
      }
      if (best < 0) break;
      applied[best] = 1;
      rules.push((additive ? '+@' : '-@') + ACL_CATEGORIES[best]);
      for (const def of apply[best]) {
        setPerm(fake, def, additive ? 1 : 0);
        setPerm(temp, def, additive ? 0 : 1);
      }
    }
    const single = (def: AclRow) => {
      const bit = s.allowed[def.id];
      if (bit !== fake[def.id]) {
        rules.push((bit ? '+' : '-') + def.name);
        setPerm(fake, def, bit);
      }
    };
    for (const def of tops.values()) {
      single(def);
      if (def.subcommands) for (const sub of def.subcommands.values()) single(sub);
      const args = s.firstArgs?.get(def.id);
      if (args !== undefined && !s.allowed[def.id]) for (const a of args) rules.push(`+${def.name}|${a}`);
    }
    return rules;
  }

  /** Key patterns as GETUSER shows them ("~*", or the patterns separated by spaces). */
  describeKeys(s: AclSelector): string {
    if (s.allKeys) return '~*';
    return s.keys.map((k) => (k.flags === (KEY_READ | KEY_WRITE) ? '~' : k.flags === KEY_READ ? '%R~' : '%W~') + k.pattern.toString('latin1')).join(' ');
  }

  describeChannels(s: AclSelector): string {
    if (s.allChannels) return '&*';
    return s.channels.map((c) => '&' + c.toString('latin1')).join(' ');
  }

  flags(u: AclUser): string[] {
    const f = [u.enabled ? 'on' : 'off'];
    if (u.nopass) f.push('nopass');
    if (u.sanitizePayload) f.push('sanitize-payload');
    return f;
  }

  /** Redis's ACLDescribeSelector: keys, channels, commands. */
  describeSelector(s: AclSelector): string {
    const parts: string[] = [];
    const keys = this.describeKeys(s);
    if (keys) parts.push(keys);
    if (s.allChannels) parts.push('&*');
    else {
      parts.push('resetchannels');
      const ch = this.describeChannels(s);
      if (ch) parts.push(ch);
    }
    parts.push(this.describeCommands(s));
    return parts.join(' ');
  }

  /** One ACL LIST line. */
  describe(u: AclUser): string {
    const parts = ['user', u.name, ...this.flags(u)];
    for (const p of u.passwords) parts.push('#' + p);
    parts.push(this.describeSelector(u));
    for (const s of u.selectors) parts.push('(' + this.describeSelector(s) + ')');
    return parts.join(' ');
  }

  /**
   * Redis's ACLCheckAllUserCommandPerm: null when one selector allows the command, else the
   * NOPERM reason with the offending argument index (0 for the command). When every selector
   * refuses, the worst reason (channel > key > command) and then the last index is reported.
   */
  check(u: AclUser, def: CommandDef, argv: Argv): AclDenial | null {
    if (u.unrestricted) return null;
    this.keysFound = false;
    let worst = this.checkSelector(u, def, argv);
    if (worst === 0) return null;
    let index = this.deniedAt;
    for (const s of u.selectors) {
      const r = this.checkSelector(s, def, argv);
      if (r === 0) return null;
      if (r > worst || (r === worst && this.deniedAt > index)) {
        worst = r;
        index = this.deniedAt;
      }
    }
    return { reason: worst === DENIED_CMD ? 'command' : worst === DENIED_KEY ? 'key' : 'channel', index };
  }

  /**
   * Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess (SORT's BY and GET patterns): may the
   * user run this command with a selector that reads every key (allkeys, or a "*" pattern
   * with read permission)?
   */
  readsEveryKey(u: AclUser, def: CommandDef, argv: Argv): boolean {
    if (u.unrestricted) return true;
    this.keysFound = false;
    for (let i = -1; i < u.selectors.length; i++) {
      const s = i < 0 ? u : u.selectors[i];
      if (this.checkSelector(s, def, argv) !== 0) continue;
      if (s.allKeys) return true;
      for (const k of s.keys) if (k.flags & KEY_READ && k.pattern.length === 1 && k.pattern[0] === 42) return true;
    }
    return false;
  }

  /** The keys of the command being checked, found once for all selectors. */
  private readonly keyList = new KeyList();
  private keysFound = false;
  /** The argument a refusal is about (set by checkSelector). */
  private deniedAt = 0;

  /** Redis's ACLSelectorCheckCmd: 0 or DENIED_*. */
  private checkSelector(s: AclSelector, def: CommandDef, argv: Argv): number {
    this.deniedAt = 0;
    // Commands allowed before authentication (AUTH, HELLO, QUIT, RESET) are never refused.
    if (!s.allowed[def.id] && !(def.flags & F.NO_AUTH) && !firstArgAllowed(s, def, argv)) return DENIED_CMD;
    if (!s.allKeys && def.keyMode & KEY_MODE.HAS_KEYS) {
      const keys = this.keyList;
      if (!this.keysFound) {
        findKeys(def, argv, keys);
        this.keysFound = true;
      }
      for (let i = 0; i < keys.count; i++) {
        const pos = keys.pos[i];
        if (!keyAllowed(s, argv.buf, argv.start[pos], argv.end[pos], keys.flags[i])) {
          this.deniedAt = pos;
          return DENIED_KEY;
        }
      }
    }
    if (!s.allChannels && def.flags & F.PUBSUB) {
      // Redis's getChannelsFromCommand: PUBLISH/SPUBLISH publish to argv[1]; (S)SUBSCRIBE and
      // PSUBSCRIBE subscribe to every argument; a pattern must be allowed literally.
      const name = def.name;
      const literal = name === 'psubscribe';
      let to = argv.count;
      if (name === 'publish' || name === 'spublish') to = 2;
      else if (!(name === 'subscribe' || name === 'ssubscribe' || literal)) to = 1;
      for (let i = 1; i < to; i++) {
        if (!channelAllowed(s.channels, argv.buf, argv.start[i], argv.end[i], literal)) {
          this.deniedAt = i;
          return DENIED_CHANNEL;
        }
      }
    }
    return 0;
  }

  /**
   * After ACL SETUSER changed `u` (was `before`): subscribers of `u` whose channels the new
   * rules refuse are disconnected (Redis's ACLKillPubsubClientsIfNeeded). Nothing happens
   * when a selector allows every channel or when no channel pattern was removed.
   */
  disconnectRevokedSubscribers(before: AclUser, u: AclUser, pubsub: PubSub): void {
    const after = [u, ...u.selectors];
    if (after.some((s) => s.allChannels)) return;
    const upcoming = after.flatMap((s) => s.channels);
    const kept = (p: Buffer) => upcoming.some((x) => x.equals(p));
    if ([before, ...before.selectors].every((s) => s.channels.every(kept))) return;
    pubsub.disconnectRevoked(u, (name, literal) => upcoming.some((p) => (literal ? p.equals(name) : globMatch(p, name))));
  }

  /** Every user and REST token, to persist (restore() reads it back). */
  snapshot(): SavedAcl {
    const users: SavedUser[] = [];
    for (const u of this.users.values()) {
      users.push({
        name: u.name, enabled: u.enabled, nopass: u.nopass, sanitizePayload: u.sanitizePayload,
        passwords: [...u.passwords], ...saveSelector(this, u), selectors: u.selectors.map((x) => saveSelector(this, x)),
      });
    }
    return { users, restTokens: [...this.restTokens] };
  }

  /** Replace every user and REST token with a snapshot() (start-up). */
  restore(saved: SavedAcl): void {
    this.users.clear();
    this.restTokens.clear();
    for (const x of saved.users) {
      const u = this.create(x.name);
      u.enabled = x.enabled;
      u.nopass = x.nopass;
      u.sanitizePayload = x.sanitizePayload;
      for (const p of x.passwords) u.passwords.add(p);
      this.restoreSelector(u, x);
      u.selectors = (x.selectors ?? []).map((sx) => {
        const s = new AclSelector(this.table().size);
        this.restoreSelector(s, sx);
        return s;
      });
      u.refresh();
    }
    if (!this.users.has('default')) this.apply(this.create('default'), ['on', 'nopass', '~*', '&*', '+@all']);
    for (const [t, n] of saved.restTokens) if (this.users.has(n)) this.restTokens.set(t, n);
  }

  private restoreSelector(s: AclSelector, x: SavedSelector): void {
    this.applySelector(s, x.allCommands ? '+@all' : '-@all');
    // Rules naming commands this build does not know are skipped, as ACL SETUSER would refuse them.
    for (const r of x.rules) this.applySelector(s, r);
    s.allKeys = x.allKeys;
    s.keys = x.keys.map(([p, f]) => keyPattern(Buffer.from(p, 'latin1'), f));
    s.allChannels = x.allChannels;
    s.channels = x.channels.map((c) => Buffer.from(c, 'latin1'));
  }

  /** ACL GENPASS: hex of `bits` random bits (rounded up to a nibble). */
  static genpass(bits = 256): string {
    const chars = Math.ceil(bits / 4);
    return randomBytes(Math.ceil(chars / 2)).toString('hex').slice(0, chars);
  }

  /** ACL RESTTOKEN: a REST token carrying the user's permissions. */
  restToken(name: string, pass: string): string | null {
    const u = this.authenticate(name, pass);
    if (u === null) return null;
    for (const [t, n] of this.restTokens) if (n === name) return t;
    const token = randomBytes(32).toString('base64url');
    this.restTokens.set(token, name);
    return token;
  }

  deleteUser(name: string): void {
    this.users.delete(name);
    for (const [t, n] of this.restTokens) if (n === name) this.restTokens.delete(t);
    this.onUserDeleted?.(name);
  }

  /**
   * Redis's addACLLogEntry: an entry like a recent one (same reason, context, object and user
   * within 60 s) is counted in that one, which takes the new client info and time and moves to
   * the head; the oldest beyond acllog-max-len are dropped (only here, as in Redis: lowering
   * the limit trims at the next entry).
   */
  addLog(e: Omit<AclLogEntry, 'count' | 'created' | 'updated' | 'id'>): void {
    const now = Date.now();
    const at = this.log.findIndex((x) => x.reason === e.reason && x.context === e.context && x.object === e.object && x.username === e.username);
    const same = at < 0 ? undefined : this.log[at];
    if (same !== undefined && now - same.updated < 60000) {
      same.count++;
      same.updated = now;
      same.clientInfo = e.clientInfo;
      this.log.splice(at, 1);
      this.log.unshift(same);
      return;
    }
    this.log.unshift({ ...e, count: 1, created: now, updated: now, id: this.nextLogId++ });
    if (this.log.length > this.logMaxLen) this.log.length = this.logMaxLen;
  }

  /** Log a refusal of `def` (context: toplevel, multi or lua); object as Redis records it. */
  logDenial(d: AclDenial, def: CommandDef, argv: Argv, context: string, username: string, clientInfo: string): void {
    this.addLog({ reason: d.reason, context, object: d.reason === 'command' ? def.name : argv.key(d.index), username, clientInfo });
  }

  private nextLogId = 0;
  /** acllog-max-len, set by the engine. */
  logMaxLen = 128;
}

const UNKNOWN = 'Unknown command or category name in ACL';

/** A row of the ACL's table: a row of ours (CommandDef) or a Redis row we do not implement. */
interface AclRow {
  readonly name: string;
  readonly id: number;
  readonly subcommands?: ReadonlyMap<string, AclRow>;
}

interface AclTable {
  /** Bits per selector: our rows, then Redis's rows we lack. */
  size: number;
  tops: Map<string, AclRow>;
  apply: AclRow[][];
  count: AclRow[][];
}

/** "+select|0": argv[1] is one of the first arguments allowed for the row (case-insensitive, as a C string). */
function firstArgAllowed(s: AclSelector, def: CommandDef, argv: Argv): boolean {
  const list = s.firstArgs === null || argv.count < 2 ? undefined : s.firstArgs.get(def.id);
  if (list === undefined) return false;
  const arg = asciiLower(cstr(argv.key(1)));
  return list.some((a) => asciiLower(a) === arg);
}

/** strcasecmp's folding: ASCII letters only (these strings are latin1 bytes). */
function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/**
 * Redis's ACLChangeSelectorPerm: a row's bit (a container's takes its subcommands' along); any
 * first arguments allowed for it are dropped.
 */
function changePerm(s: AclSelector, def: AclRow, allow: number): void {
  setPerm(s.allowed, def, allow);
  if (s.firstArgs !== null) s.firstArgs.delete(def.id);
}

function setPerm(bits: Uint8Array, def: AclRow, allow: number): void {
  bits[def.id] = allow;
  if (def.subcommands) for (const sub of def.subcommands.values()) bits[sub.id] = allow;
}

/** Redis's ACLStringHasSpaces: patterns may hold no white space or NUL (from index `at`). */
export function hasSpaces(op: string, at = 0): boolean {
  // C's isspace (not JS's \s, which takes the latin1 byte 0xA0 for a space).
  return /[ \t\n\v\f\r\0]/.test(op.slice(at));
}

function saveSelector(acl: Acl, s: AclSelector): SavedSelector {
  return {
    allCommands: s.allCommands, rules: acl.describeCommands(s).split(' ').slice(1),
    allKeys: s.allKeys, keys: s.keys.map((k) => [k.pattern.toString('latin1'), k.flags]),
    allChannels: s.allChannels, channels: s.channels.map((c) => c.toString('latin1')),
  };
}

/**
 * Redis's ACLSelectorCheckKey: a key read by the command (ACCESS) needs a pattern with read
 * permission, a key it changes (INSERT/DELETE/UPDATE) one with write permission.
 */
function keyAllowed(s: AclSelector, b: Buffer, start: number, end: number, specFlags: number): boolean {
  let need = 0;
  if (specFlags & KF.ACCESS) need |= KEY_READ;
  if (specFlags & (KF.INSERT | KF.DELETE | KF.UPDATE)) need |= KEY_WRITE;
  const keys = s.keys;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if ((k.flags & need) !== need) continue;
    if (k.prefix >= 0 ? hasPrefix(b, start, end, k.pattern, k.prefix) : globMatch(k.pattern, b.subarray(start, end))) return true;
  }
  return false;
}

/** Redis's ACLCheckChannelAgainstList: a pattern (PSUBSCRIBE) must be in the list literally. */
function channelAllowed(list: readonly Buffer[], b: Buffer, start: number, end: number, literal: boolean): boolean {
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    if (literal) {
      if (p.length === end - start && hasPrefix(b, start, end, p, p.length)) return true;
    } else {
      const n = literalStar(p);
      if (n >= 0 ? hasPrefix(b, start, end, p, n) : globMatch(p, b.subarray(start, end))) return true;
    }
  }
  return false;
}

/** The literal's length of a "<literal>*" pattern, else -1. */
function literalStar(p: Buffer): number {
  const n = p.length;
  if (n === 0 || p[n - 1] !== 42) return -1;
  for (let i = 0; i < n - 1; i++) {
    const c = p[i];
    if (c === 42 || c === 63 || c === 91 || c === 92) return -1; // * ? [ \
  }
  return n - 1;
}

function hasPrefix(b: Buffer, start: number, end: number, p: Buffer, n: number): boolean {
  if (end - start < n) return false;
  for (let i = 0; i < n; i++) if (b[start + i] !== p[i]) return false;
  return true;
}

export interface AclLogEntry {
  count: number;
  reason: string;
  context: string;
  object: string;
  username: string;
  clientInfo: string;
  created: number;
  updated: number;
  id: number;
}

/**
 * Strings here are latin1 byte strings (as argv.key returns them), so names, passwords and
 * patterns are exact bytes.
 *
 * ACL users, as Redis 7 models them (without selectors): on/off, passwords (SHA-256),
 * command permissions as a bit per command row (top-level and subcommand), key patterns with
 * read/write flags, channel patterns. The rule text shown by ACL LIST / GETUSER is rebuilt the
 * way Redis 7.0 does it: "+@all" or "-@all" followed by the command rules in the order they
 * were applied, a later rule for the same command replacing the earlier one.
 *
 * Hot path: `user.unrestricted` is true for a user that may run everything on every key and
 * channel (the default user), so the dispatcher pays one boolean test per command.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Argv } from '../resp/argv.js';
import type { CommandDef } from './command.js';
import type { Registry } from './registry.js';
import { F, ACL_CATEGORIES, type AclCategory } from './flags.js';
import { globMatch } from './glob.js';

const KEY_READ = 1;
const KEY_WRITE = 2;

export interface KeyPattern {
  readonly pattern: Buffer;
  readonly flags: number; // KEY_READ | KEY_WRITE
}

export class AclUser {
  enabled = false;
  nopass = false;
  sanitizePayload = false;
  readonly passwords = new Set<string>();
  /** allowed[id] = 1 when the command row with that id may run. */
  allowed: Uint8Array;
  /** Set only by +@all / allcommands: commands added later are allowed too. */
  allCommands = false;
  /** Command rules as applied, e.g. ["+@read", "-get", "+set"]. */
  rules: string[] = [];
  allKeys = false;
  keys: KeyPattern[] = [];
  allChannels = false;
  channels: Buffer[] = [];
  unrestricted = false;

  constructor(readonly name: string, size: number) {
    this.allowed = new Uint8Array(size);
  }

  refresh(): void {
    this.unrestricted = this.allCommands && this.allKeys && this.allChannels;
  }
}

export class AclError extends Error {}

/**
 * The users as persisted with the data (src/store, record 'acl'): what ACL SETUSER set, by
 * name (command rules as text, so that rows added by a later version are placed by name).
 */
export interface SavedUser {
  name: string;
  enabled: boolean;
  nopass: boolean;
  sanitizePayload: boolean;
  passwords: string[];
  allCommands: boolean;
  rules: string[];
  allKeys: boolean;
  keys: [pattern: string, flags: number][];
  allChannels: boolean;
  channels: string[];
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
    const u = new AclUser(name, this.reg.all.length);
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
      if (err !== null) throw new AclError(`Error in ACL SETUSER modifier '${r}': ${err}`);
    }
    u.refresh();
  }

  private applyOne(u: AclUser, op: string): string | null {
    const low = op.toLowerCase();
    switch (low) {
      case 'on': u.enabled = true; return null;
      case 'off': u.enabled = false; return null;
      case 'nopass': u.nopass = true; u.passwords.clear(); return null;
      case 'resetpass': u.nopass = false; u.passwords.clear(); return null;
      case 'allkeys': case '~*': u.allKeys = true; u.keys = []; return null;
      case 'resetkeys': u.allKeys = false; u.keys = []; return null;
      case 'allchannels': case '&*': u.allChannels = true; u.channels = []; return null;
      case 'resetchannels': u.allChannels = false; u.channels = []; return null;
      case 'sanitize-payload': u.sanitizePayload = true; return null;
      case 'skip-sanitize-payload': u.sanitizePayload = false; return null;
      case 'allcommands': case '+@all':
        u.allowed.fill(1); u.allCommands = true; u.rules = []; return null;
      case 'nocommands': case '-@all':
        u.allowed.fill(0); u.allCommands = false; u.rules = []; return null;
      case 'reset':
        for (const x of ['resetpass', 'resetkeys', 'resetchannels', 'off', 'sanitize-payload', '-@all']) this.applyOne(u, x);
        return null;
      case 'clearselectors':
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
    if (c0 === '~' || c0 === '%') {
      let flags = KEY_READ | KEY_WRITE;
      let pat = op.slice(1);
      if (c0 === '%') {
        const t = op.indexOf('~');
        if (t < 0) return 'Syntax error';
        flags = 0;
        for (const ch of op.slice(1, t).toUpperCase()) {
          if (ch === 'R') flags |= KEY_READ;
          else if (ch === 'W') flags |= KEY_WRITE;
          else return 'Syntax error';
        }
        if (flags === 0) return 'Syntax error';
        pat = op.slice(t + 1);
      }
      if (u.allKeys) return `Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns`;
      if (pat === '*' && flags === (KEY_READ | KEY_WRITE)) { u.allKeys = true; u.keys = []; return null; }
      const b = Buffer.from(pat, 'latin1');
      if (!u.keys.some((k) => k.flags === flags && k.pattern.equals(b))) u.keys.push({ pattern: b, flags });
      return null;
    }
    if (c0 === '&') {
      if (u.allChannels) return `Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels`;
      const b = Buffer.from(op.slice(1), 'latin1');
      if (!u.channels.some((p) => p.equals(b))) u.channels.push(b);
      return null;
    }
    if ((c0 === '+' || c0 === '-') && op.length > 1) {
      if (op[1] === '@') {
        const cat = low.slice(2) as AclCategory;
        if (!ACL_CATEGORIES.includes(cat)) return 'Unknown command or category name in ACL';
        this.addRule(u, c0 + '@' + cat, (def) => (this.reg.categories(def) as string[]).includes(cat));
        return null;
      }
      const name = low.slice(1);
      const def = this.findCommand(name);
      if (def === undefined) return 'Unknown command or category name in ACL';
      this.addRule(u, c0 + name, (d) => d === def || (def.subcommands !== undefined && d.name.startsWith(def.name + '|')));
      return null;
    }
    return 'Syntax error';
  }

  private findCommand(name: string): CommandDef | undefined {
    const [top, sub] = name.split('|');
    const def = this.reg.commands.get(top);
    if (sub === undefined || def === undefined) return def;
    return def.subcommands?.get(sub);
  }

  /**
   * Add a command or category rule the way Redis 7.0 keeps its rule text minimal: earlier rules
   * that this one overrides (the same command or category, or commands of this category) are
   * dropped, and the rule itself is recorded only if it changes what the user may run.
   */
  private addRule(u: AclUser, rule: string, covers: (def: CommandDef) => boolean): void {
    const isCat = rule[1] === '@';
    u.rules = u.rules.filter((r) => {
      if (r[1] === '@') return !(isCat && r.slice(1) === rule.slice(1));
      const d = this.findCommand(r.slice(1));
      return d === undefined || !covers(d);
    });
    this.recompute(u);
    const allow = rule[0] === '+' ? 1 : 0;
    let changes = false;
    for (const def of this.reg.all) {
      if (covers(def) && u.allowed[def.id] !== allow) {
        changes = true;
        u.allowed[def.id] = allow;
      }
    }
    if (changes) u.rules.push(rule);
  }

  /** Bits from the base (+@all or -@all) and the recorded rules, in order. */
  private recompute(u: AclUser): void {
    u.allowed.fill(u.allCommands ? 1 : 0);
    for (const r of u.rules) {
      const allow = r[0] === '+' ? 1 : 0;
      if (r[1] === '@') {
        const cat = r.slice(2);
        for (const def of this.reg.all) if ((this.reg.categories(def) as string[]).includes(cat)) u.allowed[def.id] = allow;
      } else {
        const d = this.findCommand(r.slice(1));
        if (d === undefined) continue;
        u.allowed[d.id] = allow;
        if (d.subcommands) for (const s of d.subcommands.values()) u.allowed[s.id] = allow;
      }
    }
  }

  /** The command rules as ACL LIST and GETUSER show them. */
  describeCommands(u: AclUser): string {
    return [u.allCommands ? '+@all' : '-@all', ...u.rules].join(' ');
  }

  describeKeys(u: AclUser): string {
    if (u.allKeys) return '~*';
    return u.keys.map((k) => (k.flags === (KEY_READ | KEY_WRITE) ? '~' : `%${k.flags & KEY_READ ? 'R' : ''}${k.flags & KEY_WRITE ? 'W' : ''}~`) + k.pattern.toString('latin1')).join(' ');
  }

  describeChannels(u: AclUser): string {
    if (u.allChannels) return '&*';
    return u.channels.map((c) => '&' + c.toString('latin1')).join(' ');
  }

  flags(u: AclUser): string[] {
    const f = [u.enabled ? 'on' : 'off'];
    if (u.nopass) f.push('nopass');
    if (u.sanitizePayload) f.push('sanitize-payload');
    return f;
  }

  /** One ACL LIST line. */
  describe(u: AclUser): string {
    const parts = ['user', u.name, ...this.flags(u)];
    for (const p of u.passwords) parts.push('#' + p);
    const keys = this.describeKeys(u);
    if (keys) parts.push(keys);
    if (u.allChannels) parts.push('&*');
    else {
      parts.push('resetchannels');
      const ch = this.describeChannels(u);
      if (ch) parts.push(ch);
    }
    parts.push(this.describeCommands(u));
    return parts.join(' ');
  }

  /**
   * Check one command for a user: null when allowed, else the NOPERM reason
   * ('command' | 'key' | 'channel') with the offending argument index (0 for the command).
   */
  check(u: AclUser, def: CommandDef, argv: Argv): { reason: 'command' | 'key' | 'channel'; index: number } | null {
    if (u.unrestricted) return null;
    // Commands allowed before authentication (AUTH, HELLO, QUIT, RESET) are never refused.
    if (!u.allowed[def.id] && !(def.flags & F.NO_AUTH)) return { reason: 'command', index: 0 };
    if (!u.allKeys && def.keys[0] !== 0) {
      const need = def.flags & F.WRITE ? KEY_WRITE : KEY_READ;
      for (const i of this.reg.keyIndexes(def, argv)) {
        const ok = u.keys.some((k) => (k.flags & need) === need && globMatch(k.pattern, argv.view(i)));
        if (!ok) return { reason: 'key', index: i };
      }
    }
    if (!u.allChannels && def.flags & F.PUBSUB) {
      const name = def.name;
      const literal = name === 'psubscribe';
      let from = 1;
      let to = argv.count;
      if (name === 'publish' || name === 'spublish') to = 2;
      else if (!(name === 'subscribe' || name === 'ssubscribe' || literal)) from = to;
      for (let i = from; i < to; i++) {
        const ch = argv.view(i);
        const ok = u.channels.some((p) => (literal ? p.equals(ch) : globMatch(p, ch)));
        if (!ok) return { reason: 'channel', index: i };
      }
    }
    return null;
  }

  /** Every user and REST token, to persist (restore() reads it back). */
  snapshot(): SavedAcl {
    const users: SavedUser[] = [];
    for (const u of this.users.values()) {
      users.push({
        name: u.name, enabled: u.enabled, nopass: u.nopass, sanitizePayload: u.sanitizePayload,
        passwords: [...u.passwords], allCommands: u.allCommands, rules: [...u.rules],
        allKeys: u.allKeys, keys: u.keys.map((k) => [k.pattern.toString('latin1'), k.flags]),
        allChannels: u.allChannels, channels: u.channels.map((c) => c.toString('latin1')),
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
      u.allCommands = x.allCommands;
      // Rules of commands this build does not know are dropped, as ACL SETUSER would refuse them.
      u.rules = x.rules.filter((r) => r[1] === '@' || this.findCommand(r.slice(1)) !== undefined);
      u.allKeys = x.allKeys;
      u.keys = x.keys.map(([p, f]) => ({ pattern: Buffer.from(p, 'latin1'), flags: f }));
      u.allChannels = x.allChannels;
      u.channels = x.channels.map((c) => Buffer.from(c, 'latin1'));
      this.recompute(u);
      u.refresh();
    }
    if (!this.users.has('default')) this.apply(this.create('default'), ['on', 'nopass', '~*', '&*', '+@all']);
    for (const [t, n] of saved.restTokens) if (this.users.has(n)) this.restTokens.set(t, n);
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

  addLog(e: Omit<AclLogEntry, 'count' | 'created' | 'updated' | 'id'>): void {
    const now = Date.now();
    const same = this.log.find((x) => x.reason === e.reason && x.context === e.context && x.object === e.object && x.username === e.username);
    if (same && now - same.updated < 60000) {
      same.count++;
      same.updated = now;
      same.clientInfo = e.clientInfo;
      return;
    }
    this.log.unshift({ ...e, count: 1, created: now, updated: now, id: this.nextLogId++ });
    if (this.log.length > 128) this.log.pop();
  }

  private nextLogId = 0;
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

/**
 * REST authentication and access rules.
 *
 * Tokens: a Standard token (every command) and a Read Only token (read commands only). They
 * come from --token / --read-only-token, or are generated on first start and kept with the
 * data so that clients keep working across restarts: in LMDB (record 'rest-tokens', committed
 * with the next batch). An existing <dir>/rest-tokens.json (earlier versions) is migrated
 * into LMDB once and removed. With `--appendfsync no` nothing goes to LMDB; the tokens are
 * then kept in <dir>/rest-tokens.json (mode 0600) so that a cache/CI server keeps its tokens.
 * `CONFIG SET requirepass` ("resetting the database password", redis-rest.md §3.2) revokes
 * both and generates new ones.
 *
 * Access rules, decided once per command row (by its flags and ACL categories) and kept in a
 * table indexed by the row's id, enforced through the dispatcher's `c.deny` hook:
 *   - never over REST: rows flagged NO_REST (MULTI/EXEC/WATCH/AUTH/SELECT/blocking...),
 *     connection commands other than PING and ECHO (Upstash's REST limitation), and commands
 *     that turn a connection into a stream (MONITOR, SUBSCRIBE...: served as SSE endpoints);
 *   - Read Only token: READONLY rows that are not @dangerous, minus the heavy scans SCAN and
 *     KEYS (Upstash refuses them), plus PING and ECHO.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Argv } from '../resp/argv.js';
import { Client } from '../engine/client.js';
import type { CommandDef } from '../engine/command.js';
import type { Registry } from '../engine/registry.js';
import { F } from '../engine/flags.js';
import type { Acl, AclUser } from '../engine/acl.js';
import type { PersistenceApi } from '../engine/engine.js';

export const Access = { NONE: 0, STANDARD: 1, READ_ONLY: 2 } as const;
/** A default token, or the ACL user a token minted by ACL RESTTOKEN carries. */
export type AccessKind = (typeof Access)[keyof typeof Access] | AclUser;

export const AUTH_ERROR = 'WRONGPASS invalid or missing auth token';

const TOKEN_FILE = 'rest-tokens.json';
const TOKEN_RECORD = 'rest-tokens';

interface SavedTokens {
  token?: unknown;
  readOnlyToken?: unknown;
}

function newToken(): string {
  // URL-safe, so it also travels unescaped in ?_token=.
  return crypto.randomBytes(32).toString('base64url');
}

/** Length-independent-time comparison of two strings of equal length. */
function same(a: string, b: string): boolean {
  if (a.length !== b.length || b.length === 0) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return d === 0;
}

/** Same as same(h.slice(s, e), t), without the slice. */
function sameAt(h: string, s: number, e: number, t: string): boolean {
  if (e - s !== t.length || t.length === 0) return false;
  let d = 0;
  for (let i = 0; i < t.length; i++) d |= h.charCodeAt(s + i) ^ t.charCodeAt(i);
  return d === 0;
}

export class RestTokens {
  token = '';
  readOnlyToken = '';
  /** Where each token came from, for the start-up message ("--..." = given by the operator). */
  tokenSource = '';
  readOnlySource = '';
  private readonly file: string;
  /** Tokens live in LMDB (record 'rest-tokens'); false with appendfsync no (the JSON file). */
  private readonly durable: boolean;
  private readonly where: string;

  constructor(dir: string, given: string, givenReadOnly: string, private readonly records: PersistenceApi) {
    this.file = path.join(dir, TOKEN_FILE);
    this.durable = records.mode !== 'no';
    this.where = this.durable ? `the data directory ${dir}` : this.file;
    let stored = this.durable ? records.getRecord<SavedTokens>(TOKEN_RECORD) : undefined;
    let fromFile = false;
    if (stored === undefined) {
      try {
        stored = JSON.parse(fs.readFileSync(this.file, 'utf8')) as SavedTokens;
        fromFile = true;
      } catch {
        // first start (or unreadable file): generate below
      }
    } else {
      // Left by a migration interrupted between the commit and the unlink: LMDB has them.
      this.removeFile();
    }
    stored ??= {};
    let changed = false;
    if (given !== '') {
      this.token = given;
      this.tokenSource = '--token / REST_TOKEN';
    } else if (typeof stored.token === 'string' && stored.token !== '') {
      this.token = stored.token;
      this.tokenSource = fromFile ? this.file : this.where;
    } else {
      this.token = newToken();
      this.tokenSource = 'generated, stored in ' + this.where;
      changed = true;
    }
    if (givenReadOnly !== '') {
      this.readOnlyToken = givenReadOnly;
      this.readOnlySource = '--read-only-token / REST_READ_ONLY_TOKEN';
    } else if (typeof stored.readOnlyToken === 'string' && stored.readOnlyToken !== '') {
      this.readOnlyToken = stored.readOnlyToken;
      this.readOnlySource = fromFile ? this.file : this.where;
    } else {
      this.readOnlyToken = newToken();
      this.readOnlySource = 'generated, stored in ' + this.where;
      changed = true;
    }
    if (this.token === this.readOnlyToken) {
      throw new Error('the REST token and the read-only token must differ');
    }
    if (fromFile && this.durable) {
      // One-time migration of the JSON file of earlier versions into LMDB: the file goes once
      // the record is committed and on disk.
      this.store();
      records.saveNow().then(() => this.removeFile(), () => {});
    } else if (changed) {
      this.store();
    }
  }

  /** Which token `Bearer <t>` carries, compared in place (no substring on the hot path). */
  checkBearer(h: string): AccessKind {
    let e = h.length;
    while (e > 7 && (h.charCodeAt(e - 1) === 0x20 || h.charCodeAt(e - 1) === 0x09)) e--;
    let s = 7;
    while (s < e && h.charCodeAt(s) === 0x20) s++;
    if (sameAt(h, s, e, this.token)) return Access.STANDARD;
    if (sameAt(h, s, e, this.readOnlyToken)) return Access.READ_ONLY;
    return Access.NONE;
  }

  /** Which token this is. */
  check(t: string): AccessKind {
    if (same(t, this.token)) return Access.STANDARD;
    if (same(t, this.readOnlyToken)) return Access.READ_ONLY;
    return Access.NONE;
  }

  /** Revoke both tokens (password reset): new ones are generated, stored and printed. */
  revoke(): void {
    this.token = newToken();
    this.readOnlyToken = newToken();
    this.tokenSource = this.readOnlySource = 'generated after a password reset, stored in ' + this.where;
    this.store();
    console.log('REST tokens revoked (requirepass changed). New tokens:');
    console.log(`  REST token:           ${this.token}`);
    console.log(`  REST read-only token: ${this.readOnlyToken}`);
  }

  private store(): void {
    const saved: SavedTokens = { token: this.token, readOnlyToken: this.readOnlyToken };
    if (this.durable) {
      this.records.putRecord(TOKEN_RECORD, saved);
      return;
    }
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      const tmp = this.file + '.tmp';
      fs.writeFileSync(tmp, JSON.stringify(saved) + '\n', { mode: 0o600 });
      fs.renameSync(tmp, this.file);
    } catch (err) {
      console.warn(`warning: could not store the REST tokens in ${this.file} (${(err as Error).message}); they last until restart`);
    }
  }

  private removeFile(): void {
    try {
      fs.rmSync(this.file, { force: true });
    } catch {
      // not ours to fail on: the LMDB record wins anyway
    }
  }
}

// ------------------------------------------------------------------ access rules

const RULE_ANY = 1;
const RULE_STANDARD = 2;
const RULE_NO_REST = 3;

/** Commands that turn the connection into a stream: SSE endpoints over REST, never commands. */
const STREAMING = new Set(['monitor', 'subscribe', 'psubscribe', 'ssubscribe', 'unsubscribe', 'punsubscribe', 'sunsubscribe', 'sync', 'psync']);
/** Connection commands Upstash serves over REST. */
const REST_CONNECTION = new Set(['ping', 'echo']);
/** Reads the read-only token may not run (redis-rest.md §3.2). */
const HEAVY_READS = new Set(['scan', 'keys']);

function classify(reg: Registry, def: CommandDef): number {
  const top = def.name.split('|')[0];
  const cats = reg.categories(def);
  if (def.flags & F.NO_REST || STREAMING.has(top)) return RULE_NO_REST;
  if (cats.includes('connection') && !REST_CONNECTION.has(top)) return RULE_NO_REST;
  if (REST_CONNECTION.has(top)) return RULE_ANY;
  if (def.flags & F.READONLY && !cats.includes('dangerous') && !HEAVY_READS.has(top)) return RULE_ANY;
  return RULE_STANDARD;
}

/** The Client every REST request runs as: it carries the per-row rule table. */
export class RestClient extends Client {
  rules: Uint8Array = new Uint8Array(0);
}

export function ruleTable(reg: Registry): Uint8Array {
  const t = new Uint8Array(reg.all.length);
  for (const def of reg.all) t[def.id] = classify(reg, def);
  return t;
}

export function notOverRest(name: string): string {
  return `ERR Command '${name}' is not available over the REST API`;
}

/**
 * A token minted by ACL RESTTOKEN: the (enabled) user it carries, else NONE. `token` is the
 * text after "Bearer " or the ?_token= value.
 */
export function aclTokenAccess(acl: Acl, token: string): AccessKind {
  const name = acl.restTokens.get(token);
  const u = name === undefined ? undefined : acl.users.get(name);
  return u !== undefined && u.enabled ? u : Access.NONE;
}

/** Make the REST client run with this access: REST rules, token rules, ACL user. */
export function applyAccess(c: Client, acl: Acl, access: AccessKind): void {
  if (typeof access === 'object') {
    c.deny = denyStandard; // the user's own ACL rules are checked by the dispatcher
    c.aclUser = access;
    c.user = access.name;
  } else {
    c.deny = access === Access.STANDARD ? denyStandard : denyReadOnly;
    c.aclUser = acl.defaultUser;
    c.user = 'default';
  }
}

/** c.deny for the Standard token. */
export function denyStandard(c: Client, def: CommandDef, _argv: Argv, inScript = false): string | null {
  return !inScript && (c as RestClient).rules[def.id] === RULE_NO_REST ? notOverRest(def.name) : null;
}

/** c.deny for the Read Only token. */
export function denyReadOnly(c: Client, def: CommandDef, _argv: Argv, inScript = false): string | null {
  const r = (c as RestClient).rules[def.id];
  if (r === RULE_ANY) return null;
  if (r === RULE_NO_REST) {
    if (!inScript) return notOverRest(def.name);
    // In a script: what the token may not run directly stays refused (writes, dangerous, KEYS).
    if (def.flags & F.READONLY && !(c.engine.registry.categories(def) as string[]).includes('dangerous')) return null;
  }
  return `NOPERM this user has no permissions to run the '${def.name}' command`;
}

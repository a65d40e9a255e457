/**
 * The SEARCH.* indexes and aliases of one engine, kept in step with the keyspace through the
 * engine's change listeners (registered when the first index appears: no cost before), and
 * their definitions kept in <dir>/search-indexes.json when persistence is on. Contents are not
 * stored: after a restart each index is rebuilt from the keyspace on first use.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../db.js';
import type { Engine, KeyspaceListener } from '../engine.js';
import { SearchIndex } from './index.js';
import { defFromJson, type IndexDef } from './schema.js';

/**
 * Pending keys beyond which an index is rescanned whole instead: this many, or the number of
 * keys in the database if larger (the set holds keys that exist or were just written; a rescan
 * of a large keyspace costs more than applying a burst of its size).
 */
const MAX_DIRTY = 65_536;
const FILE = 'search-indexes.json';
/** Background drain: wait this long after a write, then index for at most the budget per turn. */
const DRAIN_DELAY_MS = 2;
const DRAIN_BUDGET_MS = 4;

export class SearchRegistry implements KeyspaceListener {
  readonly indexes = new Map<string, SearchIndex>();
  readonly aliases = new Map<string, string>();
  private listening = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly file: string | null;

  constructor(private readonly eng: Engine) {
    const mode = eng.config.get('appendfsync');
    const dir = eng.config.get('dir');
    this.file = (mode === 'always' || mode === 'everysec') && dir ? path.join(dir, FILE) : null;
    this.load();
  }

  /** An index by name or alias. */
  resolve(name: string): SearchIndex | undefined {
    return this.indexes.get(name) ?? this.indexes.get(this.aliases.get(name) ?? '');
  }

  /** The index, caught up with every write acknowledged so far. */
  ready(idx: SearchIndex): SearchIndex {
    idx.catchUp(this.eng.dbs[idx.def.db], this.eng.now);
    return idx;
  }

  add(def: IndexDef, scan: boolean): SearchIndex {
    const idx = new SearchIndex(def);
    this.indexes.set(def.name, idx);
    if (!this.listening) {
      this.listening = true;
      this.eng.addListener(this);
    }
    if (scan) idx.stale = true;
    this.ready(idx);
    this.save();
    return idx;
  }

  drop(name: string): boolean {
    // Aliases stay (the reference lists dangling aliases): one may be re-pointed or recreated.
    if (!this.indexes.delete(name)) return false;
    this.save();
    return true;
  }

  /** 1: a new alias, 2: an existing one (re)pointed. */
  setAlias(alias: string, name: string): number {
    const existed = this.aliases.has(alias);
    this.aliases.set(alias, name);
    this.save();
    return existed ? 2 : 1;
  }

  delAlias(alias: string): boolean {
    if (!this.aliases.delete(alias)) return false;
    this.save();
    return true;
  }

  // ---------------------------------------------------------------- keyspace listener

  keyChanged(db: Db, key: string): void {
    for (const idx of this.indexes.values()) {
      if (idx.def.db !== db.index || idx.stale || !idx.covers(key)) continue;
      idx.dirty.add(key);
      if (idx.dirty.size > MAX_DIRTY && idx.dirty.size > db.loadedSize) { idx.stale = true; idx.dirty.clear(); }
      if (this.timer === null) this.schedule();
    }
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.drain(), DRAIN_DELAY_MS);
    this.timer.unref();
  }

  /** Background indexing: a few ms of pending keys per turn of the event loop, between commands. */
  private drain(): void {
    this.timer = null;
    const deadline = performance.now() + DRAIN_BUDGET_MS;
    let pending = false;
    for (const idx of this.indexes.values()) {
      if (idx.stale || idx.dirty.size === 0) continue;
      if (!idx.catchUpSome(this.eng.dbs[idx.def.db], Date.now(), deadline)) pending = true;
    }
    if (pending) this.schedule();
  }

  /** DEBUG RELOAD: the keyspace came back without change signals; rebuild on next use. */
  reloaded(): void {
    for (const idx of this.indexes.values()) idx.stale = true;
  }

  flushed(db: Db): void {
    for (const idx of this.indexes.values()) {
      if (idx.def.db !== db.index) continue;
      idx.clear();
      idx.dirty.clear();
      idx.stale = false;
    }
  }

  swapped(a: Db, b: Db): void {
    for (const idx of this.indexes.values()) if (idx.def.db === a.index || idx.def.db === b.index) idx.stale = true;
  }

  // ---------------------------------------------------------------- definitions on disk

  private load(): void {
    if (this.file === null) return;
    let data: unknown;
    try {
      data = JSON.parse(fs.readFileSync(this.file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') console.error(`search: cannot read ${this.file}: ${(err as Error).message}`);
      return;
    }
    const o = data as { indexes?: unknown[]; aliases?: unknown[] };
    for (const x of Array.isArray(o.indexes) ? o.indexes : []) {
      const def = defFromJson(x);
      if (def === null || def.db < 0 || def.db >= this.eng.dbs.length) continue;
      const idx = new SearchIndex(def);
      idx.stale = true; // contents are rebuilt from the keyspace on first use
      this.indexes.set(def.name, idx);
    }
    for (const a of Array.isArray(o.aliases) ? o.aliases : []) {
      if (Array.isArray(a) && typeof a[0] === 'string' && typeof a[1] === 'string') this.aliases.set(a[0], a[1]);
    }
    if (this.indexes.size > 0) {
      this.listening = true;
      this.eng.addListener(this);
    }
  }

  private save(): void {
    if (this.file === null) return;
    const data = JSON.stringify({
      version: 1,
      indexes: [...this.indexes.values()].map((i) => i.def),
      aliases: [...this.aliases],
    });
    const tmp = `${this.file}.tmp`;
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, this.file);
  }
}

const REGISTRIES = new WeakMap<Engine, SearchRegistry>();

export function registryOf(eng: Engine): SearchRegistry {
  let r = REGISTRIES.get(eng);
  if (r === undefined) {
    r = new SearchRegistry(eng);
    REGISTRIES.set(eng, r);
  }
  return r;
}

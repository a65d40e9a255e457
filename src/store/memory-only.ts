/**
 * The PersistenceApi of `--appendfsync no`: nothing is written. A module of its own so that a
 * server without persistence never loads lmdb (12 MB of RSS: store/persistence.ts is imported
 * only when a persistent mode is on).
 */
import type { Engine, PersistenceApi } from '../engine/engine.js';

/** appendfsync no: nothing is stored; INFO and SAVE still answer. */
export class MemoryOnly implements PersistenceApi {
  readonly mode = 'no';
  private readonly records = new Map<string, unknown>();
  constructor(private readonly eng: Engine) {}

  info(): string[] {
    return [
      'loading:0',
      'async_loading:0',
      `rdb_changes_since_last_save:${this.eng.dirty}`,
      'rdb_bgsave_in_progress:0',
      `rdb_last_save_time:${this.eng.lastSave}`,
      'rdb_last_bgsave_status:ok',
      'aof_enabled:0',
      'aof_last_write_status:ok',
      'appendfsync:no',
      'lmdb_last_commit_time:0',
      'lmdb_last_error:',
    ];
  }

  saveNow(): Promise<void> {
    return Promise.resolve();
  }

  reload(): boolean {
    return false;
  }

  putRecord(name: string, value: unknown): void {
    this.records.set(name, value);
  }

  getRecord<V = unknown>(name: string): V | undefined {
    return this.records.get(name) as V | undefined;
  }
}

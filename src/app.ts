/**
 * createServer(config): the engine plus its transports (RESP over TCP, the REST API over HTTP).
 * Tests and main.ts both use this.
 */
import { Engine } from './engine/engine.js';
import { FAMILIES } from './engine/commands/index.js';
import { TcpServer } from './tcp/server.js';
import type { HttpServer } from './http/server.js';
import type { RestTokens } from './http/auth.js';
import type { V2Router } from './http/v2.js';
import type { SearchService } from './search/service.js';
import { type Config, configExtras, ConfigError } from './config.js';
import type { QStashService } from './qstash/service.js';
import type { WorkflowService } from './qstash/workflow/service.js';
import { MemoryOnly } from './store/memory-only.js';
import { setLmdbCheck, type LmdbCheckMode } from './store/datadir.js';
import { restoreSavedFunctions } from './engine/scripting/host.js';
import type { SavedAcl } from './engine/acl.js';

export interface RunningServer {
  readonly engine: Engine;
  /** Where the /v2 services register their endpoints (null when HTTP is off). */
  readonly v2: V2Router | null;
  readonly tcpPort: number;
  /** Port of the REST API; 0 when it is off (--http-port -1). */
  readonly httpPort: number;
  /** The REST tokens (null when the REST API is off). */
  readonly tokens: RestTokens | null;
  /** The QStash-compatible message service (null when HTTP is off). */
  readonly qstash: QStashService | null;
  stop(): Promise<void>;
}

export async function createServer(config: Config): Promise<RunningServer> {
  const engine = new Engine(config, FAMILIES);
  // Open the data directory before listening (throws when another process owns it); its keys
  // load once the ports are open (startLoading below).
  setLmdbCheck(config.get('lmdb-check') as LmdbCheckMode);
  const mode = config.get('appendfsync');
  // memory: what only persistence or the REST API use is imported only when they are on (lmdb
  // alone is 12 MB of RSS, uWebSockets.js 2.5 MB; a RESP-only cache server loads neither).
  const persistence = mode === 'always' || mode === 'everysec'
    ? (await import('./store/persistence.js')).Persistence.open(engine, { dir: config.get('dir')!, mode })
    : null;
  if (persistence === null) engine.persistence = new MemoryOnly(engine);
  restoreSubsystems(engine);
  const bind = config.get('bind')!;
  // HTTP first: once the RESP port answers (what tests and scripts wait for), both are up.
  let http: HttpServer | null = null;
  let tokens: RestTokens | null = null;
  let closeStreams = () => {};
  let v2: V2Router | null = null;
  let search: SearchService | null = null;
  let qstash: QStashService | null = null;
  let workflow: WorkflowService | null = null;
  const wantHttp = Number(config.get('http-port'));
  if (wantHttp >= 0) {
    const [{ HttpServer }, { RestTokens }, { registerSse }, { V2Router }, { SearchService }, { QStashService }, { qstashHandlers }, { WorkflowService }, { workflowHandlers }] = await Promise.all([
      import('./http/server.js'), import('./http/auth.js'), import('./http/sse.js'), import('./http/v2.js'), import('./search/service.js'),
      import('./qstash/service.js'), import('./qstash/routes.js'), import('./qstash/workflow/service.js'), import('./qstash/workflow/routes.js'),
    ]);
    tokens = new RestTokens(config.get('dir')!, config.get('token')!, config.get('read-only-token')!, engine.persistence!);
    http = new HttpServer(engine, tokens);
    closeStreams = registerSse(http);
    v2 = new V2Router(http);
    // Before listening: a bad search option (plan override) fails the start with nothing open.
    search = new SearchService({
      dir: config.get('dir')!, accountEmail: config.get('account-email')!, apiKey: config.get('api-key')!,
      planFree: config.get('search-plan-free')!, planPayg: config.get('search-plan-payg')!,
      workers: Number(config.get('search-workers')), baseUrl: () => publicUrl(config, engine.httpPort),
      embedding: { url: config.get('search-embedding-url')!, model: config.get('search-embedding-model')!, key: config.get('search-embedding-key')! },
    });
    v2.register('search', search.management);
    v2.register('search-data', search.data);
    qstash = new QStashService({
      dir: config.get('dir')!, token: config.get('qstash-token')!, devCredentials: config.get('qstash-dev-credentials') === 'yes',
      retentionMs: Number(config.get('qstash-log-retention')) * 1000, defaultTimeoutMs: Number(config.get('qstash-timeout')) * 1000,
      parallelism: Number(config.get('qstash-parallelism')),
      noSync: config.get('appendfsync') !== 'always',
    });
    // The workflow layer loads its active runs before the queue starts delivering their messages.
    workflow = new WorkflowService(qstash, { lazyFetch: config.get('qstash-workflow-lazy-fetch') === 'yes' });
    await qstash.start();
    workflow.start();
    for (const [segment, h] of Object.entries(qstashHandlers(qstash))) v2.register(segment, h);
    for (const [segment, h] of Object.entries(workflowHandlers(workflow))) v2.register(segment, h);
    try {
      engine.httpPort = await http.listen(bind, wantHttp);
    } catch (err) {
      await search.close();
      workflow.stop();
      await qstash.stop();
      throw err;
    }
  }
  const tcp = new TcpServer(engine);
  let tcpPort: number;
  try {
    tcpPort = await tcp.listen(Number(config.get('port')), bind);
  } catch (err) {
    http?.close();
    await search?.close();
    workflow?.stop();
    await qstash?.stop();
    await persistence?.close();
    throw err;
  }
  // The keyspace loads in the background from here on: commands are served meanwhile (a key
  // not loaded yet is read from disk when a command names it; see src/store/loader.ts).
  persistence?.startLoading();
  engine.tcpPort = tcpPort;
  engine.start();
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      engine.stop();
      closeStreams();
      http?.close();
      workflow?.stop();
      await qstash?.stop();
      // Commit what clients were told is done, let held replies out, then close.
      await persistence?.idle();
      await tcp.close();
      await search?.close();
      await persistence?.close();
    })();
    return stopping;
  };
  return { engine, v2, tcpPort, httpPort: engine.httpPort, tokens, qstash, stop };
}

/**
 * The state of other subsystems saved with the data (src/store records): ACL users and
 * function libraries. A --requirepass given at start-up still sets the default user's password.
 */
function restoreSubsystems(engine: Engine): void {
  const acl = engine.persistence!.getRecord<SavedAcl>('acl');
  const extras = configExtras(engine.config);
  if (acl !== undefined) {
    engine.acl.restore(acl);
    if (engine.cfg('requirepass') !== '') engine.acl.setDefaultPassword(engine.cfg('requirepass'));
  }
  // A CONFIG SET requirepass survives restarts with the ACL users it changed: CONFIG GET
  // shows the password in force unless the configuration gives one.
  const saved = engine.persistence!.getRecord<string>('requirepass');
  if (saved !== undefined && !extras.given.has('requirepass') && engine.config.get('requirepass') === '') {
    engine.config.set('requirepass', saved);
  }
  // `user` lines of redis.conf, as Redis loads them at start-up (each one from a fresh user).
  for (const [name, ...rules] of extras.users) {
    engine.acl.deleteUser(name);
    const u = engine.acl.create(name);
    try {
      engine.acl.apply(u, rules);
    } catch (err) {
      throw new ConfigError(`Error in user declaration '${name}': ${(err as Error).message}`);
    }
  }
  const err = restoreSavedFunctions(engine);
  if (err !== null) console.error(`persistence: the saved function libraries could not be loaded: ${err}`);
}

/** The base URL search indexes show as their endpoint: --search-public-url, or the HTTP port on the bind address. */
function publicUrl(config: Config, port: number): string {
  const fixed = config.get('search-public-url')!;
  if (fixed !== '') return fixed.replace(/\/+$/, '');
  let host = config.get('bind')!.split(/[\s,]+/)[0] || '127.0.0.1';
  if (host === '0.0.0.0' || host === '*') host = '127.0.0.1';
  if (host === '::' || host === '::0') host = '::1';
  if (host.startsWith('-')) host = host.slice(1);
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * createServer(config): the engine plus its transports (RESP over TCP, the REST API over HTTP).
 * Tests and main.ts both use this.
 */
import { Engine } from './engine/engine.js';
import { FAMILIES } from './engine/commands/index.js';
import { TcpServer } from './tcp/server.js';
import { HttpServer } from './http/server.js';
import { RestTokens } from './http/auth.js';
import { registerSse } from './http/sse.js';
import { V2Router } from './http/v2.js';
import type { Config } from './config.js';
import { QStashService } from './qstash/service.js';
import { qstashHandlers } from './qstash/routes.js';

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
  const bind = config.get('bind')!;
  // HTTP first: once the RESP port answers (what tests and scripts wait for), both are up.
  let http: HttpServer | null = null;
  let tokens: RestTokens | null = null;
  let closeStreams = () => {};
  let v2: V2Router | null = null;
  let qstash: QStashService | null = null;
  const wantHttp = Number(config.get('http-port'));
  if (wantHttp >= 0) {
    tokens = new RestTokens(config.get('dir')!, config.get('token')!, config.get('read-only-token')!);
    http = new HttpServer(engine, tokens);
    closeStreams = registerSse(http);
    v2 = new V2Router(http);
    qstash = new QStashService({
      dir: config.get('dir')!, token: config.get('qstash-token')!, devCredentials: config.get('qstash-dev-credentials') === 'yes',
      retentionMs: Number(config.get('qstash-log-retention')) * 1000, defaultTimeoutMs: Number(config.get('qstash-timeout')) * 1000,
      noSync: config.get('appendfsync') !== 'always',
    });
    await qstash.start();
    for (const [segment, h] of Object.entries(qstashHandlers(qstash))) v2.register(segment, h);
    engine.httpPort = await http.listen(bind, wantHttp);
  }
  const tcp = new TcpServer(engine);
  let tcpPort: number;
  try {
    tcpPort = await tcp.listen(Number(config.get('port')), bind);
  } catch (err) {
    http?.close();
    await qstash?.stop();
    throw err;
  }
  engine.tcpPort = tcpPort;
  engine.start();
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      engine.stop();
      closeStreams();
      http?.close();
      await qstash?.stop();
      await tcp.close();
    })();
    return stopping;
  };
  return { engine, v2, tcpPort, httpPort: engine.httpPort, tokens, qstash, stop };
}

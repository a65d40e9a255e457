/**
 * createServer(config): the engine plus its transports. Tests and main.ts both use this.
 */
import { Engine } from './engine/engine.js';
import { FAMILIES } from './engine/commands/index.js';
import { TcpServer } from './tcp/server.js';
import type { Config } from './config.js';

export interface RunningServer {
  readonly engine: Engine;
  readonly tcpPort: number;
  stop(): Promise<void>;
}

export async function createServer(config: Config): Promise<RunningServer> {
  const engine = new Engine(config, FAMILIES);
  const tcp = new TcpServer(engine);
  const bind = config.get('bind')!;
  const tcpPort = await tcp.listen(Number(config.get('port')), bind);
  engine.tcpPort = tcpPort;
  engine.start();
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      engine.stop();
      await tcp.close();
    })();
    return stopping;
  };
  return { engine, tcpPort, stop };
}

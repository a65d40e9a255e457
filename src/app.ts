/**
 * createServer(config): the engine plus its transports. Tests and main.ts both use this.
 */
import { Engine } from './engine/engine.js';
import { FAMILIES } from './engine/commands/index.js';
import { TcpServer } from './tcp/server.js';
import type { Config } from './config.js';
import { Persistence, MemoryOnly } from './store/persistence.js';

export interface RunningServer {
  readonly engine: Engine;
  readonly tcpPort: number;
  stop(): Promise<void>;
}

export async function createServer(config: Config): Promise<RunningServer> {
  const engine = new Engine(config, FAMILIES);
  // Load the data directory before listening (throws when another process owns it).
  const mode = config.get('appendfsync');
  const persistence = mode === 'always' || mode === 'everysec'
    ? Persistence.open(engine, { dir: config.get('dir')!, mode })
    : null;
  if (persistence === null) engine.persistence = new MemoryOnly(engine);
  const tcp = new TcpServer(engine);
  const bind = config.get('bind')!;
  let tcpPort: number;
  try {
    tcpPort = await tcp.listen(Number(config.get('port')), bind);
  } catch (err) {
    await persistence?.close();
    throw err;
  }
  engine.tcpPort = tcpPort;
  engine.start();
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      engine.stop();
      // Commit what clients were told is done, let held replies out, then close.
      await persistence?.idle();
      await tcp.close();
      await persistence?.close();
    })();
    return stopping;
  };
  return { engine, tcpPort, stop };
}

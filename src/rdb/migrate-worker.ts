/**
 * The thread behind migrateExchangeSync (migrate-exchange.ts): runs each exchange with its
 * own cached connections and answers on the port, then wakes the waiting engine thread.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { migrateExchange, type MigrateRequest } from './migrate-exchange.js';
import { cachedSockets } from './migrate-socket.js';

const { port, cell } = workerData as { port: MessagePort; cell: Int32Array };

parentPort!.on('message', (req: MigrateRequest) => {
  void migrateExchange(req).then(
    (result) => answer(result),
    (err) => answer({ error: `IOERR ${err instanceof Error ? err.message : String(err)}` }),
  );
});

function answer(result: unknown): void {
  port.postMessage({ result, sockets: cachedSockets() });
  Atomics.store(cell, 0, 1);
  Atomics.notify(cell, 0);
}

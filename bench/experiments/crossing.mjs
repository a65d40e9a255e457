// Round trips between two threads, as the engine thread and the scripting worker make them:
// (port) a MessagePort message each way + Atomics.wait wake-ups (main 6cb2b4b channel.ts),
// (sab) a shared-memory frame + Atomics.wait/notify (this branch), (spin) the same with a
// bounded spin before the wait. SPIN=<loads> sets the spin. Bounded: 20,000 round trips each.
// Round trips engine<->worker: (port) current SyncChannel-like; (sab) shared buffer + Atomics.wait/notify; (spin) + bounded spin first.
import { Worker, MessageChannel, receiveMessageOnPort, isMainThread, workerData } from 'node:worker_threads';
const N = 20000; const SPIN = Number(process.env.SPIN ?? 2000);
if (isMainThread) {
  for (const mode of ['port', 'sab', 'spin', 'port', 'sab', 'spin']) {
    const ctl = new Int32Array(new SharedArrayBuffer(64));
    const data = new Uint8Array(new SharedArrayBuffer(4096));
    const { port1, port2 } = new MessageChannel();
    const w = new Worker(new URL(import.meta.url), { workerData: { ctl, data, port: port2, mode }, transferList: [port2] });
    const wait = (slot, seen) => {
      if (mode === 'spin') for (let i = 0; i < SPIN; i++) if (Atomics.load(ctl, slot) !== seen) return;
      Atomics.wait(ctl, slot, seen);
    };
    let msgs = 0, t0 = 0, cpu0;
    for (let i = 0; i <= N; i++) {
      if (i === 1) { t0 = performance.now(); cpu0 = process.cpuUsage(); }
      // receive a call
      if (mode === 'port') {
        for (;;) { const seen = Atomics.load(ctl, 0); const m = receiveMessageOnPort(port1); if (m) break; Atomics.wait(ctl, 0, seen); }
        port1.postMessage({ t: 'reply', v: new Uint8Array(6), err: false });
        Atomics.add(ctl, 1, 1); Atomics.notify(ctl, 1);
      } else {
        const seen = msgs; while (Atomics.load(ctl, 0) === seen) wait(0, seen); msgs++;
        data[100] = data[0] + 1;
        Atomics.add(ctl, 1, 1); Atomics.notify(ctl, 1);
      }
    }
    const ms = performance.now() - t0; const cpu = process.cpuUsage(cpu0);
    console.log(`${mode}: ${(ms * 1000 / N).toFixed(2)} us/round trip, main CPU ${((cpu.user + cpu.system) / N).toFixed(2)} us`);
    await w.terminate();
  }
} else {
  const { ctl, data, port, mode } = workerData;
  let seen = 0;
  const wait = (slot, s) => {
    if (mode === 'spin') for (let i = 0; i < SPIN; i++) if (Atomics.load(ctl, slot) !== s) return;
    Atomics.wait(ctl, slot, s);
  };
  for (let i = 0; i <= N; i++) {
    if (mode === 'port') {
      port.postMessage({ t: 'call', argv: [new Uint8Array(3), new Uint8Array(1)], resp: 2 });
      Atomics.add(ctl, 0, 1); Atomics.notify(ctl, 0);
      for (;;) { const s = Atomics.load(ctl, 1); const m = receiveMessageOnPort(port); if (m) break; Atomics.wait(ctl, 1, s); }
    } else {
      data[0] = i & 255;
      Atomics.add(ctl, 0, 1); Atomics.notify(ctl, 0);
      while (Atomics.load(ctl, 1) === seen) wait(1, seen); seen++;
    }
  }
}

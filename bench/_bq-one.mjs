import { Queue, Worker } from 'bullmq';
const connection = { host: '127.0.0.1', port: Number(process.env.PORT), maxRetriesPerRequest: null };
const N = Number(process.env.N ?? 2000);
const q = new Queue('one', { connection });
let t0 = performance.now();
for (let i = 0; i < N; i++) await q.add('job', { i, payload: 'x'.repeat(64) });
console.log('add ms', (performance.now() - t0).toFixed(0));
if (process.env.PROC) {
  let done = 0;
  const w = new Worker('one', async (job) => job.data.i, { connection, concurrency: Number(process.env.PROC) });
  w.on('completed', () => done++);
  t0 = performance.now();
  while (done < N) await new Promise(r => setTimeout(r, 5));
  console.log('process ms', (performance.now() - t0).toFixed(0));
  await w.close();
}
await q.close();

// The load generator of the API bench, in a worker thread so that the client's own work (fetch, JSON)
// runs beside the server instead of taking turns with it on one event loop. Plain JavaScript: worker
// threads do not inherit the TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';

/** @param {{ url: string, key: string, concurrency: number, durationMs: number }} request */
async function run({ url, key, concurrency, durationMs }) {
  /** @type {number[]} */
  const latencies = [];
  let errors = 0;
  const start = performance.now();
  const end = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (res.status !== 200) errors++;
      }
    }),
  );
  return { latencies, errors, elapsedMs: performance.now() - start };
}

parentPort?.postMessage(await run(workerData));

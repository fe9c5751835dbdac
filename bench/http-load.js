// The load generator of the API bench, in a worker thread so that the client's own work (fetch, JSON)
// runs beside the server instead of taking turns with it on one event loop. Plain JavaScript: worker
// threads do not inherit the TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';

const TIMESTAMP = /"timestamp":"([^"]+)"}\s*$/;
const decoder = new TextDecoder();

/** @param {{ url: string, key: string, concurrency: number, durationMs: number, measureAge?: boolean }} request */
async function run({ url, key, concurrency, durationMs, measureAge = false }) {
  /** @type {number[]} */
  const latencies = [];
  /** @type {number[]} How old each answer was on arrival, by the read time in its envelope (its tail only is decoded). */
  const ages = [];
  let errors = 0;
  const start = performance.now();
  const end = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const res = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
        const body = await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (measureAge) {
          const tail = TIMESTAMP.exec(decoder.decode(new Uint8Array(body, Math.max(0, body.byteLength - 80))));
          if (tail) ages.push(Date.now() - Date.parse(tail[1]));
        }
        if (res.status !== 200) errors++;
      }
    }),
  );
  return { latencies, errors, elapsedMs: performance.now() - start, ages };
}

parentPort?.postMessage(await run(workerData));

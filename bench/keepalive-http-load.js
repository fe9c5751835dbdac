// A leaner load generator than http-load.js (fetch): node:http on kept-alive sockets, so that one
// client thread can offer thousands of requests a second on a 2-core machine and the figure is the
// server's, not the client's (fetch tops out near 700 req/s here on the same thread). Plain
// JavaScript: worker threads do not inherit the TypeScript loader.
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const TIMESTAMP = /"timestamp":"([^"]+)"}\s*$/;

/** @param {{ url: string, key: string, concurrency: number, durationMs: number, measureAge?: boolean }} request */
async function run({ url, key, concurrency, durationMs, measureAge = false }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const target = new URL(url);
  /** @type {number[]} */
  const latencies = [];
  /** @type {number[]} */
  const ages = [];
  let errors = 0;
  const start = performance.now();
  const end = start + durationMs;
  const once = () =>
    new Promise((resolve) => {
      const t0 = performance.now();
      const req = http.request(
        { host: target.hostname, port: target.port, path: target.pathname + target.search, agent, headers: { Authorization: `Bearer ${key}` } },
        (res) => {
          /** @type {Buffer | undefined} */
          let last;
          res.on('data', (chunk) => (last = chunk));
          res.on('end', () => {
            latencies.push(performance.now() - t0);
            if (res.statusCode !== 200) errors++;
            if (measureAge && last) {
              // The envelope's timestamp ends the body: only the last chunk's tail is read.
              const tail = TIMESTAMP.exec(last.subarray(Math.max(0, last.length - 80)).toString('latin1'));
              if (tail) ages.push(Date.now() - Date.parse(tail[1]));
            }
            resolve(undefined);
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve(undefined);
      });
      req.end();
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) await once();
    }),
  );
  agent.destroy();
  return { latencies, errors, elapsedMs: performance.now() - start, ages };
}

parentPort?.postMessage(await run(workerData));

import cluster from 'node:cluster';
import client from 'prom-client';
import { metricsRegistry } from './metrics.ts';

const ASK = 'fleetcore:metrics:ask';
const ANSWER = 'fleetcore:metrics:answer';
const TIMEOUT_MS = 5_000;

interface Ask { type: typeof ASK; id: number }
interface Answer { type: typeof ANSWER; id: number; text?: string; error?: string }

export interface MetricsText {
  contentType: string;
  text: string;
}

/**
 * The primary of `fleet serve --processes N` answers workers' requests for the whole cluster's
 * metrics: prom-client's AggregatorRegistry collects every worker's registry over IPC and sums them
 * (metrics with a `process` label stay apart). A scrape hits whichever worker the connection went to,
 * and still sees every process.
 */
export function serveClusterMetrics(): client.AggregatorRegistry<client.RegistryContentType> {
  const aggregator = new client.AggregatorRegistry();
  cluster.on('message', (worker, message: Ask) => {
    if (message?.type !== ASK) return;
    aggregator.clusterMetrics().then(
      (text) => worker.isConnected() && worker.send({ type: ANSWER, id: message.id, text } satisfies Answer),
      (error: Error) => worker.isConnected() && worker.send({ type: ANSWER, id: message.id, error: error.message } satisfies Answer),
    );
  });
  return aggregator;
}

/**
 * In a cluster worker: answers the primary's collection with this process's registry. prom-client
 * sets up that answer when an AggregatorRegistry is made, so one is made (and otherwise unused).
 */
export function answerClusterMetrics(): void {
  if (cluster.isWorker) new client.AggregatorRegistry();
}

let nextId = 0;

/** The metrics a scrape should see: this process's, or, in a cluster worker, every process's through the primary. */
export async function scrapeMetrics(): Promise<MetricsText> {
  const contentType = metricsRegistry.contentType;
  if (!cluster.isWorker || !process.send) return { contentType, text: await metricsRegistry.metrics() };
  const id = nextId++;
  const text = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      reject(new Error('the cluster primary did not answer with the metrics in 5 s'));
    }, TIMEOUT_MS);
    function onMessage(message: Answer) {
      if (message?.type !== ANSWER || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', onMessage);
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.text ?? '');
    }
    process.on('message', onMessage);
    process.send!({ type: ASK, id } satisfies Ask);
  });
  return { contentType, text };
}

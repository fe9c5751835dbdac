import { LATENCY_BUCKETS_S, metricsRegistry, processLabel, prom } from '../runtime/metrics.ts';
import type { JobQueue, QueueBackend } from './queue/job-queue.ts';

const registers = [metricsRegistry];
// Engine processes' lags, read at scrape time (declared first: the lag gauge's collect reads it).
const lags = new Set<EngineLag>();

/** What the engine and webhook delivery did; the lag says how far evaluation is behind what ingest stored. */
export const engineMetrics = {
  jobs: new prom.Counter({
    name: 'fleetcore_engine_jobs_total', help: 'Engine jobs run, by job name and outcome (completed, failed)', labelNames: ['name', 'outcome'], registers,
  }),
  jobSeconds: new prom.Histogram({
    name: 'fleetcore_engine_job_seconds', help: 'Time an engine job ran, by job name', labelNames: ['name'], buckets: LATENCY_BUCKETS_S, registers,
  }),
  evaluationDelay: new prom.Histogram({
    name: 'fleetcore_engine_evaluation_delay_seconds', help: 'From fixes committed by ingest to their evaluation finished by the engine',
    buckets: LATENCY_BUCKETS_S, registers,
  }),
  lag: new prom.Gauge({
    name: 'fleetcore_engine_lag_seconds',
    help: 'Per engine process: how far evaluation is behind the fixes ingest committed (see EngineLag)',
    labelNames: ['process'], registers,
    collect() {
      this.reset();
      for (const lag of lags) this.set({ process: processLabel }, lag.seconds);
    },
  }),
  events: new prom.Counter({
    name: 'fleetcore_events_total', help: 'Events written to the event log, by type (counted once, when webhook fan-out reads them)', labelNames: ['type'], registers,
  }),
  webhookDeliveries: new prom.Counter({
    name: 'fleetcore_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome (succeeded, retry, failed, gone)', labelNames: ['outcome'], registers,
  }),
  webhookDelay: new prom.Histogram({
    name: 'fleetcore_webhook_delivery_delay_seconds', help: 'From an event written to its webhook delivered (successful attempts)',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 86400], registers,
  }),
  webhookSeconds: new prom.Histogram({
    name: 'fleetcore_webhook_request_seconds', help: 'Duration of webhook HTTP requests', buckets: LATENCY_BUCKETS_S, registers,
  }),
  notificationDeliveries: new prom.Counter({
    name: 'fleetcore_notification_deliveries_total', help: 'Notification delivery attempts by channel and outcome (succeeded, retry, failed)', labelNames: ['channel', 'outcome'], registers,
  }),
  notificationDelay: new prom.Histogram({
    name: 'fleetcore_notification_delivery_delay_seconds', help: 'From an event written to the log to its notification delivered, by channel (successful attempts)',
    labelNames: ['channel'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 86400], registers,
  }),
  notificationSeconds: new prom.Histogram({
    name: 'fleetcore_notification_attempt_seconds', help: 'Duration of one notification attempt (building and sending the message), by channel', labelNames: ['channel'], buckets: LATENCY_BUCKETS_S, registers,
  }),
};

/**
 * The engine's lag in this process: ingest stamps each `devices` signal with when it committed the
 * fixes; the lag is how long ago the oldest signal still being evaluated was committed, or, when
 * none is running, how long the last one took from commit to evaluated. A stuck or slow engine shows
 * as a lag that grows; fixes still waiting in the queue show in fleetcore_queue_jobs.
 */
export class EngineLag {
  private readonly active = new Map<number, number>();
  private lastLagS = 0;
  private next = 0;

  constructor() {
    lags.add(this);
  }

  /** A job for fixes committed at `committedAt` starts; call the returned function when it ends. */
  started(committedAt: number): (evaluated: boolean) => void {
    const id = this.next++;
    this.active.set(id, committedAt);
    return (evaluated) => {
      this.active.delete(id);
      if (!evaluated) return;
      this.lastLagS = Math.max(0, Date.now() - committedAt) / 1000;
      engineMetrics.evaluationDelay.observe(this.lastLagS);
    };
  }

  get seconds(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const at of this.active.values()) oldest = Math.min(oldest, at);
    return oldest === Number.POSITIVE_INFINITY ? this.lastLagS : Math.max(this.lastLagS, (Date.now() - oldest) / 1000);
  }

  close(): void {
    lags.delete(this);
  }
}

/** Any queue, whatever its jobs: only its name and counts are read. */
type CountedQueue = Pick<JobQueue, 'name' | 'counts'>;

const queues = new Set<CountedQueue>();

new prom.Gauge({
  name: 'fleetcore_queue_jobs',
  help: 'Jobs in the engine and webhook queues by state (shared through Redis: every process sees the same, so the cluster keeps the largest)',
  labelNames: ['queue', 'state'],
  aggregator: 'max',
  registers,
  async collect() {
    this.reset();
    for (const queue of queues) {
      try {
        const counts = await queue.counts();
        for (const [state, n] of Object.entries(counts)) this.set({ queue: queue.name, state }, n);
      } catch {
        // Redis unreachable: the depth is unknown, not zero, so none is reported.
      }
    }
  },
});

/** Reports `queue`'s depth at each scrape until the returned function is called. */
export function exportQueueDepth(queue: CountedQueue): () => void {
  queues.add(queue);
  return () => queues.delete(queue);
}

/** Queues whose backend's health is reported, by queue name. */
const watched = new Map<string, Pick<QueueBackend, 'health'>>();

new prom.Gauge({
  name: 'fleetcore_queue_up',
  help: 'Per queue: 1 when its backend takes jobs (Redis answers a write; the in-process queue always), 0 when it does not (the cluster keeps the lowest)',
  labelNames: ['queue'],
  aggregator: 'min',
  registers,
  async collect() {
    this.reset();
    for (const [queue, backend] of watched) this.set({ queue }, (await backend.health()).up ? 1 : 0);
  },
});

/** Reports whether `backend` takes jobs, as the gauge of each queue named, until the returned function is called. */
export function exportQueueUp(backend: Pick<QueueBackend, 'health'>, queueNames: readonly string[]): () => void {
  for (const name of queueNames) watched.set(name, backend);
  return () => {
    for (const name of queueNames) if (watched.get(name) === backend) watched.delete(name);
  };
}

import { cutOffDatabase, type Fault, type FaultContext, type FaultWindow, type RunResult } from './fleet-run.ts';
import type { FleetUnderTest } from './fleet-under-test.ts';
import type { ProcessFleet } from './process-fleet.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long a killed process stays dead before the suite (standing in for a supervisor) starts it again. */
const RESTART_AFTER_MS = 3_000;
/** How long the database refuses connections. */
const DATABASE_OUTAGE_MS = 5_000;
/** How long Redis is down between its shutdown and its start. */
const REDIS_OUTAGE_MS = 3_000;
/** The webhook receiver holds every request this long, then refuses for REFUSE_MS (below the retry schedule's 5 s step). */
const STALL_MS = 8_000;
const REFUSE_MS = 3_000;

/** While an engine is killed, the receiver is slow, so the process dies with deliveries in flight. */
const SLOW_ANSWER_MS = 1_000;

export interface KillOptions<F extends FleetUnderTest> {
  /** Start it again this long after, as a supervisor would; without it the node stays down and the others carry on. */
  restartAfterMs?: number;
  /** The webhook receiver answers slowly meanwhile, so the process dies with deliveries in flight. */
  withDeliveriesInFlight?: boolean;
  /** Watches what the rest does once it is gone (HAProxy marking it down …): the window's note. */
  watch?: (context: FaultContext<F>) => Promise<string | undefined>;
  evidence: Fault['evidence'];
}

/** SIGKILL one node of the run (`ingest`, `engine-1` …), and start it again or not. */
export function killNode<F extends FleetUnderTest>(node: string, options: KillOptions<F>): Fault<F> {
  const { restartAfterMs, withDeliveriesInFlight = false } = options;
  const then = restartAfterMs === undefined ? 'it stays down' : `start it again ${restartAfterMs / 1000} s later`;
  return {
    name: `SIGKILL ${node}`,
    does: `kill -9 the ${node} process, ${then}${withDeliveriesInFlight ? ` (the webhook receiver answering in ${SLOW_ANSWER_MS / 1000} s meanwhile, so webhook requests are in flight when it dies)` : ''}`,
    async inject(context: FaultContext<F>): Promise<FaultWindow> {
      const { roles, receiver, ended } = context;
      if (withDeliveriesInFlight) {
        receiver.answerDelayMs = SLOW_ANSWER_MS;
        await sleep(2 * SLOW_ANSWER_MS);
      }
      const start = Date.now();
      await roles.kill(node);
      receiver.answerDelayMs = 0;
      if (restartAfterMs !== undefined) await sleep(restartAfterMs);
      const end = Date.now();
      ended(end);
      const note = await options.watch?.(context);
      if (restartAfterMs !== undefined) await roles.start(node);
      return { start, end, note };
    },
    evidence: options.evidence,
  };
}

export function diedWithDeliveriesInFlight(run: RunResult): string | undefined {
  return run.receiver.abandoned > 0 ? `it died with ${run.receiver.abandoned} webhook requests unanswered, sent again once their claims expired` : undefined;
}

/** The faults the suite injects into the three-process setup, each into a run of its own. */
export const FAULTS: Fault<ProcessFleet>[] = [
  killNode('ingest', {
    restartAfterMs: RESTART_AFTER_MS,
    evidence(run) {
      const reconnected = run.trackers.filter((t) => t.reconnects > 0).length;
      return reconnected === run.trackers.length ? `all ${reconnected} trackers lost their connection and reconnected` : undefined;
    },
  }),
  killNode('engine', { restartAfterMs: RESTART_AFTER_MS, withDeliveriesInFlight: true, evidence: diedWithDeliveriesInFlight }),
  killNode('api', { restartAfterMs: RESTART_AFTER_MS, evidence: (run) => (run.api.failed > 0 ? `${run.api.failed} API requests failed while it was down` : undefined) }),
  {
    name: 'Redis restart',
    does: `redis-server SHUTDOWN NOSAVE (every queue, job and schedule lost), started again ${REDIS_OUTAGE_MS / 1000} s later`,
    async inject({ fleet: { redis } }: FaultContext<ProcessFleet>): Promise<FaultWindow> {
      const start = Date.now();
      await redis.shutdownNosave();
      await sleep(REDIS_OUTAGE_MS);
      await redis.start();
      return { start, end: Date.now() };
    },
    // The engine found its schedules gone and made them again: Redis really came back empty.
    evidence: (run) => (/Redis had lost a schedule/.test(run.logs) ? 'Redis came back empty and the engine made its schedules again' : undefined),
  },
  {
    name: 'PostgreSQL cut off',
    does: `ALTER DATABASE … ALLOW_CONNECTIONS false and pg_terminate_backend for its sessions, ${DATABASE_OUTAGE_MS / 1000} s, then true`,
    async inject({ fleet: { adminUrl }, databaseName }: FaultContext): Promise<FaultWindow> {
      const start = Date.now();
      const cut = await cutOffDatabase(adminUrl, databaseName);
      await sleep(DATABASE_OUTAGE_MS);
      await cut.reopen();
      return { start, end: Date.now() };
    },
    evidence: (run) => (/cannot store positions; retrying/.test(run.logs) ? 'ingest held the trackers\' frames and retried' : undefined),
  },
  {
    name: 'webhook receiver backlog',
    does: `the receiver holds every request for ${STALL_MS / 1000} s, then answers 503 for ${REFUSE_MS / 1000} s, then recovers`,
    async inject({ receiver }: FaultContext): Promise<FaultWindow> {
      const start = Date.now();
      receiver.setMode('stall');
      await sleep(STALL_MS);
      receiver.setMode('refuse');
      await sleep(REFUSE_MS);
      receiver.setMode('answer');
      return { start, end: Date.now() };
    },
    evidence: (run) =>
      run.receiver.stalled > 0 && run.receiver.refusals > 0 ? `${run.receiver.stalled} requests held, ${run.receiver.refusals} refused` : undefined,
  },
];

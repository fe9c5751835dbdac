import { cutOffDatabase, type Fault, type FaultContext, type FaultWindow } from './fleet-run.ts';
import type { RoleName } from './fleet-roles.ts';

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

/** While the engine is killed, the receiver is slow, so the process dies with deliveries in flight. */
const SLOW_ANSWER_MS = 1_000;

function killAndRestart(role: RoleName, evidence: Fault['evidence']): Fault {
  const withDeliveriesInFlight = role === 'engine';
  return {
    name: `SIGKILL ${role}`,
    does: `kill -9 the ${role} process, start it again ${RESTART_AFTER_MS / 1000} s later${withDeliveriesInFlight ? ` (the webhook receiver answering in ${SLOW_ANSWER_MS / 1000} s meanwhile, so webhook requests are in flight when it dies)` : ''}`,
    async inject({ roles, receiver, ended }: FaultContext): Promise<FaultWindow> {
      if (withDeliveriesInFlight) {
        receiver.answerDelayMs = SLOW_ANSWER_MS;
        await sleep(2 * SLOW_ANSWER_MS);
      }
      const start = Date.now();
      await roles.kill(role);
      receiver.answerDelayMs = 0;
      await sleep(RESTART_AFTER_MS);
      const end = Date.now();
      ended(end);
      await roles.start(role);
      return { start, end };
    },
    evidence,
  };
}

/** The faults the suite injects, each into a run of its own. */
export const FAULTS: Fault[] = [
  killAndRestart('ingest', (run) => {
    const reconnected = run.trackers.filter((t) => t.reconnects > 0).length;
    return reconnected === run.trackers.length ? `all ${reconnected} trackers lost their connection and reconnected` : undefined;
  }),
  killAndRestart('engine', (run) =>
    run.receiver.abandoned > 0 ? `it died with ${run.receiver.abandoned} webhook requests unanswered, sent again once their claims expired` : undefined,
  ),
  killAndRestart('api', (run) => (run.api.failed > 0 ? `${run.api.failed} API requests failed while it was down` : undefined)),
  {
    name: 'Redis restart',
    does: `redis-server SHUTDOWN NOSAVE (every queue, job and schedule lost), started again ${REDIS_OUTAGE_MS / 1000} s later`,
    async inject({ redis }: FaultContext): Promise<FaultWindow> {
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
    async inject({ adminUrl, databaseName }: FaultContext): Promise<FaultWindow> {
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

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

function killAndRestart(role: RoleName, evidence: Fault['evidence']): Fault {
  return {
    name: `SIGKILL ${role}`,
    does: `kill -9 the ${role} process, start it again ${RESTART_AFTER_MS / 1000} s later`,
    async inject({ roles }: FaultContext): Promise<FaultWindow> {
      const start = Date.now();
      await roles.kill(role);
      await sleep(RESTART_AFTER_MS);
      const end = Date.now();
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
  killAndRestart('engine', (run) => (run.processesStarted === 4 && run.exits.every((e) => e.code === 0) ? 'the engine process was killed and a new one took over' : undefined)),
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
    evidence: (run) => (run.window.end - run.window.start >= REDIS_OUTAGE_MS ? 'Redis was down and came back empty' : undefined),
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

import type { z } from 'zod';
import type { Logger } from '../../runtime/logger.ts';
import type { Job } from './job-queue.ts';
import { UnrecoverableJobError } from './unrecoverable-job-error.ts';

/** A queue's jobs: for each job name (a key of `P`), the schema its payload `P[name]` must match. */
export type JobSchemas<P> = { readonly [N in keyof P]: z.ZodType<P[N]> };

/** The payload of each job name that a set of schemas describes. */
export type PayloadsOf<S extends Readonly<Record<string, z.ZodType>>> = { [N in keyof S]: z.output<S[N]> };

/** The union of a queue's jobs, `{ name: 'devices'; data: {...} } | { name: 'prune'; data: {...} } | ...`. */
export type JobsOf<P> = { [N in keyof P & string]: { name: N; data: P[N] } }[keyof P & string];

/** One processor for each job name, called with the job's checked payload and a logger for its lines. */
export type JobProcessors<P> = { readonly [N in keyof P]: (data: P[N], log: Logger) => Promise<unknown> };

/**
 * A queue's worker: each job read off the queue is checked against its name's schema and handed to
 * its name's processor. A job of a name the queue does not have, or whose data does not match its
 * payload (written by another version, or by hand), fails at once with a message that says which
 * and why, and is not retried: it would fail the same way every time.
 */
export function routeJobs<P>(queue: string, schemas: JobSchemas<P>, processors: NoInfer<JobProcessors<P>>): (job: Job, log: Logger) => Promise<void> {
  const known = (name: string): name is keyof P & string => Object.hasOwn(schemas, name);
  return async (job, log) => {
    if (!known(job.name)) {
      throw new UnrecoverableJobError(`Job '${job.name}' (id ${job.id}) is not a job of queue '${queue}', whose jobs are ${Object.keys(schemas).join(', ')}; failed without retries.`);
    }
    await runChecked(schemas, processors, job.name, job, log);
  };
}

// Generic in the name, so that the schema's output and the processor's input are the same `P[N]`.
async function runChecked<P, N extends keyof P & string>(schemas: JobSchemas<P>, processors: JobProcessors<P>, name: N, job: Job, log: Logger): Promise<void> {
  const parsed = schemas[name].safeParse(job.data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${['data', ...issue.path.map(String)].join('.')}: ${issue.message}`).join('; ');
    throw new UnrecoverableJobError(`Job '${name}' (id ${job.id}) has data that is not a '${name}' payload (${problems}); failed without retries.`);
  }
  await processors[name](parsed.data, log);
}

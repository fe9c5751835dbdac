/**
 * Thrown by a processor for a job that would fail the same way on every attempt (its data does not
 * match its name): both backends fail it at once instead of retrying it, as BullMQ's
 * UnrecoverableError does. Retries are for what may pass next time (a connection lost, a lock not
 * granted), never for bad data.
 */
export class UnrecoverableJobError extends Error {
  override readonly name = 'UnrecoverableJobError';
}

/** The group commit already holds as many rows or bytes as it may: the frame is refused unacknowledged. */
export class WaitListFullError extends Error {
  override name = 'WaitListFullError';
}

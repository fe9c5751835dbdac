/** A batch failed with an error that retrying cannot fix; its trackers are not acknowledged. */
export class StoreFailedError extends Error {
  override name = 'StoreFailedError';
  constructor(
    message: string,
    readonly sqlstate: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A problem with configuration or the environment, reported as one line without a stack trace. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** The command line is wrong; answered with the usage hint and exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

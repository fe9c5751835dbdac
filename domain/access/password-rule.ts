/** A password's length bounds, in characters: long enough to resist guessing, short enough to hash cheaply. */
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

/** What is wrong with a new password, in a sentence; undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `password must have at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `password must have at most ${PASSWORD_MAX_LENGTH} characters`;
  return undefined;
}

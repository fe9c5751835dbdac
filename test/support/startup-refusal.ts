import { expect } from 'vitest';
import { StartupError } from '../../runtime/startup-error.ts';

/**
 * The one line a start-up check refused with: fails the test when the check let the connection
 * through (closing it) or failed with anything but a one-line StartupError.
 */
export async function startupRefusal(connecting: Promise<{ disconnect(): void }>): Promise<string> {
  const error = await connecting.then(
    (client) => {
      client.disconnect();
      return undefined;
    },
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(StartupError);
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  return message;
}

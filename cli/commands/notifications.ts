import webPush from 'web-push';
import { parseCommand } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';

export const notificationsUsage = 'fleet notifications vapid-keys [--json]';

/**
 * A new VAPID key pair for web push, printed as the env lines to set. Browsers bind each push
 * subscription to the public key, so changing the pair later ends every subscription made before.
 */
function vapidKeys(argv: string[]): void {
  const parsed = parseCommand(argv, {});
  const { publicKey, privateKey } = webPush.generateVAPIDKeys();
  printResult(parsed.json, { publicKey, privateKey }, [`VAPID_PUBLIC_KEY=${publicKey}`, `VAPID_PRIVATE_KEY=${privateKey}`]);
}

export async function notificationsCommand(_config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action === 'vapid-keys') return vapidKeys(rest);
  throw new UsageError(action ? `unknown action "${action}"` : 'give an action');
}

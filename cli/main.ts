import { DomainError } from '../domain/domain-error.ts';
import { accountCommand, accountUsage } from './commands/account.ts';
import { deadLetterCommand, deadLetterUsage } from './commands/dead-letter.ts';
import { demoCommand, demoUsage } from './commands/demo.ts';
import { deviceCommand, deviceUsage } from './commands/device.ts';
import { groupCommand, groupUsage } from './commands/group.ts';
import { geofenceCommand, geofenceUsage } from './commands/geofence.ts';
import { keyCommand, keyUsage } from './commands/key.ts';
import { oauthClientCommand, oauthClientUsage } from './commands/oauth-client.ts';
import { migrateCommand, migrateUsage } from './commands/migrate.ts';
import { notificationsCommand, notificationsUsage } from './commands/notifications.ts';
import { serveCommand, serveUsage } from './commands/serve.ts';
import { simulateCommand, simulateUsage } from './commands/simulate.ts';
import { userCommand, userUsage } from './commands/user.ts';
import { loadConfig, type Config } from './config.ts';
import { loadEnvFile } from './env-file.ts';
import { StartupError } from '../runtime/startup-error.ts';
import { UsageError } from './usage-error.ts';

const COMMANDS: Record<string, { run: (config: Config, argv: string[]) => Promise<void>; usage: string }> = {
  serve: { run: serveCommand, usage: serveUsage },
  migrate: { run: migrateCommand, usage: migrateUsage },
  account: { run: accountCommand, usage: accountUsage },
  user: { run: userCommand, usage: userUsage },
  key: { run: keyCommand, usage: keyUsage },
  'oauth-client': { run: oauthClientCommand, usage: oauthClientUsage },
  device: { run: deviceCommand, usage: deviceUsage },
  group: { run: groupCommand, usage: groupUsage },
  geofence: { run: geofenceCommand, usage: geofenceUsage },
  demo: { run: demoCommand, usage: demoUsage },
  simulate: { run: simulateCommand, usage: simulateUsage },
  'dead-letter': { run: deadLetterCommand, usage: deadLetterUsage },
  notifications: { run: notificationsCommand, usage: notificationsUsage },
};

const HELP = `fleet — fleetcore's command line

usage:
${Object.values(COMMANDS).map((c) => `  ${c.usage}`).join('\n')}

Configuration comes from environment variables (see README): DATABASE_URL, REDIS_URL (or REDIS_CLUSTER_NODES), DATA_DIR, HOST, PORT, LOG_LEVEL.
Every command accepts --json for output that scripts can read.`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(`${HELP}\n`);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`fleet: unknown command "${name}"\n\n${HELP}\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`usage: ${command.usage}\n`);
    return 0;
  }
  try {
    loadEnvFile();
    await command.run(loadConfig(), rest);
    // A command that finished but must report a partial failure (a replay refused again) sets exitCode.
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`fleet ${name}: ${error.message}\nusage: ${command.usage}\n`);
      return 2;
    }
    if (error instanceof StartupError || error instanceof DomainError) {
      process.stderr.write(`fleet ${name}: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`fleet ${name}: unexpected error: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
// `serve` keeps running on its open handles; every other command ends here.
if (code !== 0 || process.argv[2] !== 'serve') process.exit(code);

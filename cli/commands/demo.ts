import { parseCommand } from '../command-line.ts';
import type { Config } from '../config.ts';
import { demoInstructions, seedDemo } from '../demo-seed.ts';
import { printResult } from '../output.ts';
import { withDatabase } from '../with-database.ts';

export const demoUsage = 'fleet demo [--json]';

export function localBaseUrl(config: Config): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

export async function demoCommand(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, {});
  const seed = await withDatabase(config, ({ db }) => seedDemo(db));
  printResult(parsed.json, seed, demoInstructions(seed, localBaseUrl(config)));
}

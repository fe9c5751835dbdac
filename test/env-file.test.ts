import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFleet } from './support/fleet-command.ts';

const dir = mkdtempSync(join(tmpdir(), 'fleetcore-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the .env file', () => {
  it('configures `fleet` from the file ENV_FILE names (or ./.env); the environment wins over the file', async () => {
    const file = join(dir, 'fleet.env');
    writeFileSync(file, '# settings\nDATABASE_URL=postgres://nobody@127.0.0.1:1/from_file\n');
    const fromFile = await runFleet(['migrate'], { ENV_FILE: file });
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr).toContain('cannot connect to DATABASE_URL postgres://nobody@127.0.0.1:1/from_file');

    const overridden = await runFleet(['migrate'], { ENV_FILE: file, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/from_env' });
    expect(overridden.stderr).toContain('from_env');
  });

  it('says so in one line when the file ENV_FILE names is missing', async () => {
    const missing = await runFleet(['migrate'], { ENV_FILE: join(dir, 'nope.env') });
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe(`fleet migrate: ENV_FILE ${join(dir, 'nope.env')} does not exist`);
  });
});

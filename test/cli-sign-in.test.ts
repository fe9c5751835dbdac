import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { environment, FLEET, root } from './support/fleet-process.ts';
import { TEST_CONFIG } from './support/test-app.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/** `fleet user create` and `fleet user reset-password` print one-time links that set a password once. */
let database: TestDatabase;

function fleet(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [FLEET, ...args], { cwd: root, env: environment({ ...database.env, PUBLIC_URL: 'https://fleet.example.com' }), timeout: 90_000 }, (error, stdout, stderr) => {
      done({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.destroy();
});

describe('fleet user: one-time links to set a password', () => {
  it('prints a link on create and on reset-password; each link works once', async () => {
    const account = await fixtures(database.db).account();
    const created = await fleet(['user', 'create', '--account', String(account.id), '--email', 'signin@example.test', '--timezone', 'UTC', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const link = JSON.parse(created.stdout).setPasswordUrl as string;
    expect(link).toMatch(/^https:\/\/fleet\.example\.com\/map\/set-password#token=fsi_/);

    const app = createApp({ db: database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(1000, 10_000), config: TEST_CONFIG });
    const setPassword = (token: string, password: string) => app.request('/api/v1/auth/set-password', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token, password }),
    });
    const signIn = (password: string) => app.request('/api/v1/auth/sign-in', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: 'signin@example.test', password }),
    });
    const token = new URL(link).hash.replace('#token=', '');
    expect((await setPassword(token, 'first password here')).status).toBe(200);
    expect((await setPassword(token, 'second password here')).status).toBe(400);
    expect((await signIn('first password here')).status).toBe(200);

    const reset = await fleet(['user', 'reset-password', '--user', 'signin@example.test', '--json']);
    expect(reset.code, reset.stderr).toBe(0);
    const again = new URL(JSON.parse(reset.stdout).setPasswordUrl).hash.replace('#token=', '');
    expect((await setPassword(again, 'a reset password')).status).toBe(200);
    expect((await signIn('first password here')).status).toBe(401);
    expect((await signIn('a reset password')).status).toBe(200);

    const unknown = await fleet(['user', 'reset-password', '--user', 'nobody@example.test']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/does not exist/);
  });
});

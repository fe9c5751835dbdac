import { chownSync, cpSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { StartupError } from '../runtime/startup-error.ts';
import { EMBEDDED_SOCKET_PORT, embeddedSocketDir, startEmbeddedPostgres } from './embedded-postgres.ts';

// The embedded database's socket asks for no password: where it lives must be this user's alone.
describe.skipIf(Boolean(process.env.DATABASE_URL))('the embedded database\'s socket', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const path of made.splice(0)) rmSync(path, { recursive: true, force: true });
  });

  /** A copy of the migrated template at a path long enough that the socket goes to a directory under the temporary directory. */
  function longDataDir(): string {
    const root = mkdtempSync(join(tmpdir(), 'fleetcore-socket-'));
    made.push(root);
    const dataDir = join(root, 'a-data-directory-whose-path-is-too-long-for-a-unix-socket-name-to-fit-inside-it');
    cpSync(inject('templateDir'), dataDir, { recursive: true });
    const socketDir = embeddedSocketDir(dataDir);
    expect(socketDir.startsWith(tmpdir())).toBe(true);
    made.push(socketDir);
    return dataDir;
  }

  it('is made owner-only, and so are its directory and the data directory', async () => {
    const dataDir = longDataDir();
    const socketDir = embeddedSocketDir(dataDir);
    mkdirSync(socketDir, { mode: 0o777 });
    const embedded = await startEmbeddedPostgres(dataDir);
    try {
      expect(statSync(socketDir).mode & 0o777).toBe(0o700);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(join(socketDir, `.s.PGSQL.${EMBEDDED_SOCKET_PORT}`)).mode & 0o777).toBe(0o600);
    } finally {
      await embedded.stop();
    }
  });

  it('refuses a socket directory another user made first, or a symbolic link put in its place', async () => {
    const dataDir = longDataDir();
    const socketDir = embeddedSocketDir(dataDir);
    mkdirSync(socketDir, { mode: 0o777 });
    if (process.getuid?.() === 0) {
      chownSync(socketDir, 65534, 65534);
      await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow(new StartupError(`The embedded database's socket directory ${socketDir} belongs to another user (uid 65534); remove it, or choose another DATA_DIR`));
      rmSync(socketDir, { recursive: true });
    }
    const elsewhere = mkdtempSync(join(tmpdir(), 'fleetcore-elsewhere-'));
    made.push(elsewhere);
    rmSync(socketDir, { recursive: true, force: true });
    symlinkSync(elsewhere, socketDir);
    await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow(/is not a directory of its own/);
  });
});

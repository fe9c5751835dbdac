import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { StartupError } from '../runtime/startup-error.ts';

/**
 * Makes `path` a directory only this process's user can enter, or refuses to start. The embedded
 * database answers anyone who reaches its socket, with no password, so the socket's directory must
 * be ours alone: one that another user made first (in a shared /tmp, say), or a symbolic link to
 * somewhere else, would hand them the database or let them stand in for it.
 */
export function ownerOnlyDirectory(path: string, what: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const stat = lstatSync(path);
  if (stat.isSymbolicLink() || !stat.isDirectory()) throw new StartupError(`${what} ${path} is not a directory of its own (a symbolic link or a file); remove it`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new StartupError(`${what} ${path} belongs to another user (uid ${stat.uid}); remove it, or choose another DATA_DIR`);
  }
  if ((stat.mode & 0o077) !== 0) chmodSync(path, 0o700);
}

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Extension } from '@electric-sql/pglite';
import { postgis } from '@electric-sql/pglite-postgis';
import { PackSync, Parser, type ReadEntry } from 'tar';

// PGlite copies every file of an extension's bundle into its in-memory file system, compiles every
// .so in it up front and keeps the unpacked tarball alive for as long as the database is open. The
// PostGIS bundle is 95 MB unpacked, mostly raster, topology, the tiger geocoder and upgrade scripts
// that fleetcore never installs: trimmed to the core extension it is a third of that.

const CONTROL = 'share/postgresql/extension/postgis.control';

/** The package's version names the trimmed copy, so an upgrade of @electric-sql/pglite-postgis builds a new one. */
function installedBundle(): { path: string; version: string } {
  // The package exports no package.json; its entry point sits in dist/, beside the bundle.
  const dist = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite-postgis'));
  const { version } = JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')) as { version: string };
  return { path: join(dist, 'postgis.tar.gz'), version };
}

/**
 * Hands each entry of a plain tar archive to `onEntry` in turn, synchronously; an entry nobody reads
 * must be resumed. A damaged or truncated archive throws rather than yielding part of a bundle.
 */
function eachTarEntry(tar: Buffer, onEntry: (entry: ReadEntry) => void): void {
  new Parser({ strict: true, onReadEntry: onEntry }).end(tar);
}

/** The default version named in the bundle's postgis.control: the only install script CREATE EXTENSION runs. */
function defaultVersion(tar: Buffer): string {
  const chunks: Buffer[] = [];
  let found = false;
  eachTarEntry(tar, (entry) => {
    if (entry.path !== CONTROL) return void entry.resume();
    found = true;
    entry.on('data', (chunk: Buffer) => chunks.push(chunk));
  });
  if (!found) throw new Error('the PostGIS bundle has no postgis.control');
  const match = /^default_version\s*=\s*'([^']+)'/m.exec(Buffer.concat(chunks).toString('utf8'));
  if (!match) throw new Error('postgis.control names no default_version');
  return match[1]!;
}

/**
 * What `CREATE EXTENSION postgis` and the functions fleetcore calls read: the core library, its
 * control file and install script, and PROJ's database (ST_Buffer on a geography projects to a UTM
 * zone found there).
 */
export function keepsForFleetcore(version: string): (name: string) => boolean {
  const kept = new Set([
    'lib/postgresql/postgis-3.so',
    'share/postgresql/extension/postgis.control',
    `share/postgresql/extension/postgis--${version}.sql`,
  ]);
  return (name) => kept.has(name) || name.startsWith('share/proj/');
}

/**
 * A tar.gz of the entries of `source` (a tar.gz) that `keep` accepts, their contents unchanged. The
 * headers are written afresh as plain ustar, without pax records: PGlite's tar reader knows no pax
 * and would unpack such a record as a file of its own.
 */
export function trimBundle(source: Buffer, keep?: (name: string) => boolean): Buffer {
  const tar = gunzipSync(source);
  const accept = keep ?? keepsForFleetcore(defaultVersion(tar));
  const pack = new PackSync({ strict: true, noPax: true });
  const chunks: Buffer[] = [];
  pack.on('data', (chunk: Buffer) => chunks.push(chunk));
  eachTarEntry(tar, (entry) => {
    if (entry.type !== 'Directory' && accept(entry.path)) pack.add(entry);
    else entry.resume();
  });
  pack.end();
  return gzipSync(Buffer.concat(chunks), { level: 6 });
}

/**
 * The trimmed bundle for the installed @electric-sql/pglite-postgis, built once into `cacheDir` from
 * the package's own tarball (nothing is downloaded) and reused by later starts.
 */
export function trimmedPostgisBundle(cacheDir: string): URL {
  const installed = installedBundle();
  const path = join(cacheDir, `postgis-${installed.version}-core.tar.gz`);
  if (!existsSync(path)) {
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    const partial = `${path}.${process.pid}.partial`;
    writeFileSync(partial, trimBundle(readFileSync(installed.path)), { mode: 0o600 });
    renameSync(partial, path); // a crash mid-write leaves a partial file, never a truncated bundle
  }
  return pathToFileURL(path);
}

/** PostGIS as PGlite's extension, loading the trimmed bundle in `cacheDir` instead of the package's whole one. */
export function trimmedPostgis(cacheDir: string): Extension {
  const bundlePath = trimmedPostgisBundle(cacheDir);
  return {
    name: postgis.name,
    async setup(pg, emscriptenOpts) {
      const result = await postgis.setup(pg, emscriptenOpts);
      return { ...result, bundlePath };
    },
  };
}

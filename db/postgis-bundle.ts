import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Extension } from '@electric-sql/pglite';
import { postgis } from '@electric-sql/pglite-postgis';

// PGlite copies every file of an extension's bundle into its in-memory file system, compiles every
// .so in it up front and keeps the unpacked tarball alive for as long as the database is open. The
// PostGIS bundle is 95 MB unpacked, mostly raster, topology, the tiger geocoder and upgrade scripts
// that fleetcore never installs: trimmed to the core extension it is a third of that.

const BLOCK = 512;

/** The package's version names the trimmed copy, so an upgrade of @electric-sql/pglite-postgis builds a new one. */
function installedBundle(): { path: string; version: string } {
  // The package exports no package.json; its entry point sits in dist/, beside the bundle.
  const dist = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite-postgis'));
  const { version } = JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')) as { version: string };
  return { path: join(dist, 'postgis.tar.gz'), version };
}

interface TarEntry {
  name: string;
  /** The entry's header and data blocks, as they were in the source archive. */
  bytes: Buffer;
}

function octal(field: Buffer): number {
  const text = field.toString('latin1').replace(/\0.*$/s, '').trim();
  return text === '' ? 0 : Number.parseInt(text, 8);
}

/** The entries of a plain (GNU or ustar) tar archive, each with its blocks unchanged. */
export function tarEntries(tar: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const type = String.fromCharCode(header[156]!);
    if (type === 'L' || type === 'K' || type === 'x' || type === 'g') {
      // Long names and pax headers would have to travel with the entry after them; the bundle has none.
      throw new Error(`the PostGIS bundle holds a tar entry of type '${type}', which the trimmer does not read`);
    }
    const name = header.subarray(0, 100).toString('latin1').replace(/\0.*$/s, '');
    const prefix = header.subarray(345, 500).toString('latin1').replace(/\0.*$/s, '');
    const size = type === '0' || type === '\0' ? octal(header.subarray(124, 136)) : 0;
    const length = BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    // Only POSIX ustar ("ustar\0") splits long names into a prefix; GNU tar ("ustar  ") uses those bytes otherwise.
    const posix = header.subarray(257, 263).toString('latin1') === 'ustar\0';
    entries.push({ name: posix && prefix ? `${prefix}/${name}` : name, bytes: tar.subarray(offset, offset + length) });
    offset += length;
  }
  return entries;
}

/** The default version named in the bundle's postgis.control: the only install script CREATE EXTENSION runs. */
function defaultVersion(entries: TarEntry[]): string {
  const control = entries.find((entry) => entry.name === 'share/postgresql/extension/postgis.control');
  if (!control) throw new Error('the PostGIS bundle has no postgis.control');
  const text = control.bytes.subarray(BLOCK).toString('utf8');
  const match = /^default_version\s*=\s*'([^']+)'/m.exec(text);
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

/** A tar.gz of the entries of `source` (a tar.gz) that `keep` accepts. */
export function trimBundle(source: Buffer, keep?: (name: string) => boolean): Buffer {
  const entries = tarEntries(gunzipSync(source));
  const accept = keep ?? keepsForFleetcore(defaultVersion(entries));
  const kept = entries.filter((entry) => !entry.name.endsWith('/') && accept(entry.name)).map((entry) => entry.bytes);
  return gzipSync(Buffer.concat([...kept, Buffer.alloc(2 * BLOCK)]), { level: 6 });
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

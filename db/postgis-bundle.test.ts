import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { list, type ReadEntry } from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import { trimmedPostgis, trimmedPostgisBundle } from './postgis-bundle.ts';

const cacheDir = mkdtempSync(join(tmpdir(), 'fleetcore-postgis-bundle-'));
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

const packageBundle = join(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite-postgis')), 'postgis.tar.gz');
const trimmedBundle = () => fileURLToPath(trimmedPostgisBundle(cacheDir));

/** The entries of a tar.gz, each with its contents if `read` wants them. */
function entriesOf(path: string, read: (name: string) => boolean = () => false): { entry: ReadEntry; contents: Buffer }[] {
  const entries: { entry: ReadEntry; contents: Buffer }[] = [];
  list({
    file: path,
    sync: true,
    onReadEntry: (entry) => {
      const chunks: Buffer[] = [];
      if (read(entry.path)) entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      entry.on('end', () => entries.push({ entry, contents: Buffer.concat(chunks) }));
    },
  });
  return entries;
}

describe('trimmedPostgisBundle', () => {
  it('keeps the core library, its install script and PROJ, and nothing of raster, topology or the upgrades', () => {
    const names = entriesOf(trimmedBundle()).map(({ entry }) => entry.path);
    expect(names).toContain('lib/postgresql/postgis-3.so');
    expect(names).toContain('share/postgresql/extension/postgis.control');
    expect(names).toContain('share/proj/proj.db');
    expect(names.filter((name) => /^share\/postgresql\/extension\/postgis--[\d.]+\.sql$/.test(name))).toHaveLength(1);
    expect(names.filter((name) => /raster|topology|tiger|ANY|unpackaged/.test(name))).toEqual([]);
  });

  it('builds the bundle once and reuses it on later starts', () => {
    const path = trimmedBundle();
    const built = statSync(path).mtimeMs;
    expect(trimmedBundle()).toBe(path);
    expect(statSync(path).mtimeMs).toBe(built);
  });

  it('keeps every kept file byte for byte', () => {
    const trimmed = entriesOf(trimmedBundle(), () => true);
    const names = new Set(trimmed.map(({ entry }) => entry.path));
    const original = new Map(entriesOf(packageBundle, (name) => names.has(name)).map(({ entry, contents }) => [entry.path, contents]));
    for (const { entry, contents } of trimmed) expect(contents.equals(original.get(entry.path)!), entry.path).toBe(true);
    expect(trimmed.find(({ entry }) => entry.path === 'lib/postgresql/postgis-3.so')!.contents.subarray(0, 4)).toEqual(Buffer.from([0, 0x61, 0x73, 0x6d])); // a WebAssembly module
  });

  it('holds no pax records, which PGlite\'s tar reader would unpack as files', () => {
    for (const { entry } of entriesOf(trimmedBundle())) {
      expect(entry.extended, entry.path).toBeUndefined();
      expect(entry.globalExtended, entry.path).toBeUndefined();
    }
  });

  it('is what PGlite loads PostGIS from, PROJ included', async () => {
    const db = await PGlite.create({ extensions: { postgis: trimmedPostgis(cacheDir) } });
    try {
      await db.exec('CREATE EXTENSION postgis');
      // A buffer on a geography projects to a UTM zone looked up in PROJ's database.
      const { rows } = await db.query<{ area: number }>(`SELECT ST_Area(ST_Buffer(ST_GeogFromText('POINT(2.35 48.85)'), 100)) AS area`);
      expect(rows[0]!.area).toBeGreaterThan(31_000);
      expect(rows[0]!.area).toBeLessThan(31_500);
    } finally {
      await db.close();
    }
  }, 120_000); // a first PGlite + PostGIS start: ~15 s on an idle machine, several times that on a busy one
});

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { tarEntries, trimmedPostgisBundle } from './postgis-bundle.ts';

const cacheDir = mkdtempSync(join(tmpdir(), 'fleetcore-postgis-bundle-'));
afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

describe('trimmedPostgisBundle', () => {
  it('keeps the core library, its install script and PROJ, and nothing of raster, topology or the upgrades', () => {
    const names = tarEntries(gunzipSync(readFileSync(fileURLToPath(trimmedPostgisBundle(cacheDir))))).map((entry) => entry.name);
    expect(names).toContain('lib/postgresql/postgis-3.so');
    expect(names).toContain('share/postgresql/extension/postgis.control');
    expect(names).toContain('share/proj/proj.db');
    expect(names.filter((name) => /^share\/postgresql\/extension\/postgis--[\d.]+\.sql$/.test(name))).toHaveLength(1);
    expect(names.filter((name) => /raster|topology|tiger|ANY|unpackaged/.test(name))).toEqual([]);
  });

  it('builds the bundle once and reuses it on later starts', () => {
    const path = fileURLToPath(trimmedPostgisBundle(cacheDir));
    const built = statSync(path).mtimeMs;
    expect(fileURLToPath(trimmedPostgisBundle(cacheDir))).toBe(path);
    expect(statSync(path).mtimeMs).toBe(built);
  });

  it('keeps every kept file byte for byte', () => {
    const entries = tarEntries(gunzipSync(readFileSync(fileURLToPath(trimmedPostgisBundle(cacheDir)))));
    const so = entries.find((entry) => entry.name === 'lib/postgresql/postgis-3.so')!;
    expect(so.bytes.subarray(512, 516)).toEqual(Buffer.from([0, 0x61, 0x73, 0x6d])); // a WebAssembly module
  });
});

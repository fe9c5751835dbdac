import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from './support/fleet-process.ts';

// Imports point down through the layers, and none goes round in a circle: dependency-cruiser with
// the rules in .dependency-cruiser.cjs, over the whole repository.

const LAYERS = ['runtime', 'domain', 'db', 'ingest', 'engine', 'api', 'cli', 'simulators', 'bench', 'test'];
const CRUISER = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

function cruise(cwd: string, folders: string[], config = join(root, '.dependency-cruiser.cjs')) {
  const run = spawnSync(process.execPath, [CRUISER, ...folders, '--config', config, '--output-type', 'err', '--no-progress'], { cwd, encoding: 'utf8' });
  return { code: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the layers', () => {
  it('hold over the repository: no import points up or sideways, and none goes round in a circle', () => {
    const { code, output } = cruise(root, LAYERS);
    expect(output).toMatch(/no dependency violations found/);
    expect(code, output).toBe(0);
  });

  it('are enforced: an upward import, a sideways one and a circle are each refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetcore-layers-'));
    try {
      cpSync(join(root, 'tsconfig.json'), join(dir, 'tsconfig.json'));
      const file = (path: string, text: string) => {
        mkdirSync(join(dir, path, '..'), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      file('db/rows.ts', 'export const rows = 1;\n');
      file('domain/rule.ts', "import { rows } from '../db/rows.ts';\nexport const rule = rows;\n");
      file('engine/worker.ts', 'export const worker = 1;\n');
      file('ingest/listener.ts', "import { worker } from '../engine/worker.ts';\nexport const listener = worker;\n");
      file('api/a.ts', "import { b } from './b.ts';\nexport const a = () => b;\n");
      file('api/b.ts', "import { a } from './a.ts';\nexport const b = () => a;\n");
      const { code, output } = cruise(dir, ['domain', 'db', 'ingest', 'engine', 'api']);
      expect(code).not.toBe(0);
      expect(output).toMatch(/domain-imports-down: domain\/rule\.ts → db\/rows\.ts/);
      expect(output).toMatch(/ingest-imports-down: ingest\/listener\.ts → engine\/worker\.ts/);
      expect(output).toMatch(/no-circular: api\/(a|b)\.ts/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

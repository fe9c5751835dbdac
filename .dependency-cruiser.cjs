/**
 * The layers, bottom to top, and the rule that imports point down (`npm test` runs it through
 * test/layers.test.ts):
 *
 *   runtime/ ← domain/ ← db/ ← ingest/, engine/ ← api/ ← cli/      simulators/, bench/, test/ on top
 *
 * A module may import its own layer and those below it, never one above or beside it (ingest/ and
 * engine/ stand side by side and share only what is below them), and no import goes round in a
 * circle. Tests (`*.test.ts` anywhere, and test/) sit on top of everything.
 */
const LAYERS = ['runtime', 'domain', 'db', ['ingest', 'engine'], 'api', 'cli'];
const TOP = ['simulators', 'bench', 'test'];
const TEST = '(^test/|\\.test\\.ts$)';

const folder = (names) => `^(${[].concat(names).join('|')})/`;
const above = (index) => LAYERS.slice(index + 1).flat().concat(TOP);

const layerRules = LAYERS.flatMap((layer, index) => {
  const names = [].concat(layer);
  return names.map((name) => ({
    name: `${name}-imports-down`,
    comment: `${name}/ may import only ${LAYERS.slice(0, index).flat().join(', ') || 'nothing of this project'}${names.length > 1 ? ' (not its sibling)' : ''} and itself`,
    severity: 'error',
    from: { path: folder(name), pathNot: TEST },
    to: { path: folder(above(index).concat(names.filter((n) => n !== name)).filter((n) => !(name === 'cli' && n === 'simulators'))) },
  }));
});

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'simulators-below-bench-and-tests',
      comment: 'simulators/ drive the real protocols; they do not reach into benchmarks, tests or the command line',
      severity: 'error',
      from: { path: '^simulators/', pathNot: TEST },
      to: { path: folder(['cli', 'bench', 'test']) },
    },
    {
      name: 'bench-not-on-tests',
      comment: 'bench/ measures the product; it does not reuse the tests\' support code',
      severity: 'error',
      from: { path: '^bench/' },
      to: { path: '^test/' },
    },
    {
      name: 'no-circular',
      comment: 'a circle of imports has no bottom: split what both sides need into a module below them',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^node_modules/|^data/|^deploy/|^api/map/static/)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};

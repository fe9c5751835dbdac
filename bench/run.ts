/** `npm run bench -- <name> [--json]`: runs one benchmark and prints its table. */
const BENCHES: Record<string, () => Promise<{ default: (args: string[]) => Promise<void> }>> = {
  api: () => import('./api.ts'),
  auth: () => import('./auth.ts'),
  commands: () => import('./commands.ts'),
  decode: () => import('./decode.ts'),
  events: () => import('./events.ts'),
  'fleet-reads': () => import('./fleet-reads.ts'),
  geofence: () => import('./geofence.ts'),
  geocode: () => import('./geocode.ts'),
  ingest: () => import('./ingest.ts'),
  'late-fixes': () => import('./late-fixes.ts'),
  'maintenance-check': () => import('./maintenance-check.ts'),
  memory: () => import('./memory.ts'),
  pipeline: () => import('./pipeline.ts'),
  positions: () => import('./position-export.ts'),
  storage: () => import('./position-storage.ts'),
  'track-simplify': () => import('./track-simplify.ts'),
};

const [name, ...args] = process.argv.slice(2);
const load = name ? BENCHES[name] : undefined;
if (!load) {
  process.stderr.write(`usage: npm run bench -- <${Object.keys(BENCHES).join('|')}> [--json]\n`);
  process.exit(2);
}
await (await load()).default(args);
process.exit(0);

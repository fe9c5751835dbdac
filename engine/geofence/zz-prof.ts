import { GeofenceIndex } from './geofence-index.ts';
import { seededRandom } from '../../simulators/seeded-random.ts';
const random = seededRandom(42);
const [CITY_LAT, CITY_LNG] = [19.43, -99.13];
const M = 111_320, HALF_LAT = 50_000 / M, HALF_LNG = HALF_LAT / Math.cos((CITY_LAT * Math.PI) / 180);
const shapes = Array.from({ length: 10_000 }, (_, id) => {
  const lat = CITY_LAT + (random() * 2 - 1) * HALF_LAT, lng = CITY_LNG + (random() * 2 - 1) * HALF_LNG;
  const ry = (100 + random() * 1_900) / M, rx = ry / Math.cos((lat * Math.PI) / 180);
  const n = 8 + Math.floor(random() * 57);
  const ring = Array.from({ length: n }, (_, i) => { const a = ((i + random() * 0.8) * 2 * Math.PI) / n; const f = 0.3 + random() * 0.7; return [lng + rx * f * Math.cos(a), lat + ry * f * Math.sin(a)]; });
  return { id, kind: 'polygon' as const, geometry: { type: 'Polygon' as const, coordinates: [[...ring, ring[0]!]] } };
});
const N = 1_000_000;
const xs = new Float64Array(N), ys = new Float64Array(N);
for (let i = 0; i < N; i++) { xs[i] = CITY_LNG + (random() * 2 - 1) * HALF_LNG; ys[i] = CITY_LAT + (random() * 2 - 1) * HALF_LAT; }
const index = new GeofenceIndex(shapes);
const out = new Int32Array(64);
for (let r = 0; r < 6; r++) {
  const t = performance.now(); let h = 0;
  for (let i = 0; i < N; i++) h += index.query(ys[i]!, xs[i]!, out);
  console.log(Math.round(N / ((performance.now() - t) / 1000)), h);
}
{
  const p = (index as any).packed;
  for (const NS of [p.stack ? Number(process.env.GF_NODE ?? 16) : 16]) {
  let boxTests = 0, cand = 0, edges = 0, nodes = 0;
  const { boxes, levelStart, levelCount, itemPart, partMinY, partMaxY, partScale, partBands, partBand, bandStart } = p;
  for (let q = 0; q < 100000; q++) {
    const x = xs[q]!, y = ys[q]!;
    const stack = [p.topLevel, 0];
    while (stack.length) {
      const node = stack.pop()!; const level = stack.pop()! - 1; nodes++;
      const first = node * NS, end = Math.min(first + NS, levelCount[level]);
      for (let c = first; c < end; c++) {
        const b = (levelStart[level] + c) * 4; boxTests++;
        if (x < boxes[b] || y < boxes[b + 1] || x > boxes[b + 2] || y > boxes[b + 3]) continue;
        if (level > 0) { stack.push(level, c); continue; }
        cand++;
        for (let part = itemPart[c]; part < itemPart[c + 1]; part++) {
          if (y < partMinY[part] || y >= partMaxY[part]) continue;
          const bb = partBand[part] + Math.min(partBands[part] - 1, Math.floor((y - partMinY[part]) * partScale[part]));
          edges += bandStart[bb + 1] - bandStart[bb];
        }
      }
    }
  }
  console.log('per point: nodes', nodes / 1e5, 'boxTests', boxTests / 1e5, 'candidates', cand / 1e5, 'edges', edges / 1e5, 'levels', p.levelCount);
  }
}

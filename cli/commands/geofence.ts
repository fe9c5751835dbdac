import { readFile } from 'node:fs/promises';
import { findAccount } from '../../db/accounts.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { insertGeofence } from '../../db/geofences.ts';
import { optionalString, parseCommand, positiveInteger, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { GeoJsonError, geofencesFromGeoJson } from '../geojson-geofences.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';
import { parseMode } from '../mode-option.ts';

export const geofenceUsage = 'fleet geofence import --account ID [--mode live|test] FILE.geojson [--json]';

const MAX_FILE_BYTES = 50 * 1024 * 1024;

export async function geofenceCommand(config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action !== 'import') throw new UsageError(`usage: ${geofenceUsage}`);
  const parsed = parseCommand(rest, { account: { type: 'string' }, mode: { type: 'string' } }, true);
  const accountId = positiveInteger(requiredString(parsed, 'account'), '--account');
  // The keys of this mode see them, and the engine matches them to vehicles of this mode.
  const mode = parseMode(optionalString(parsed, 'mode'));
  const [file] = parsed.positionals;
  if (!file || parsed.positionals.length > 1) throw new UsageError(`usage: ${geofenceUsage}`);

  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (text.length > MAX_FILE_BYTES) throw new UsageError(`${file} is larger than ${MAX_FILE_BYTES} bytes`);
  let features;
  try {
    features = geofencesFromGeoJson(JSON.parse(text));
  } catch (error) {
    if (error instanceof GeoJsonError || error instanceof SyntaxError) throw new UsageError(`${file}: ${error.message}`);
    throw error;
  }
  if (features.length === 0) throw new UsageError(`${file} holds no features`);

  // All or nothing: a file that fails halfway leaves no partial import behind.
  const created = await withDatabase(config, async ({ db }) => {
    if (!(await findAccount(db, accountId))) throw new DomainError('not_found', `account ${accountId} does not exist`);
    return db.transaction().execute(async (trx) => {
      const rows = [];
      for (const feature of features) {
        try {
          rows.push(await insertGeofence(trx, { accountId, mode, name: feature.name, shape: feature.shape }));
        } catch (error) {
          if (error instanceof DomainError) throw new DomainError(error.code, `${feature.name}: ${error.message}`);
          throw error;
        }
      }
      return rows;
    });
  });
  printResult(
    parsed.json,
    created.map((g) => ({ id: g.id, name: g.name, mode: g.mode, kind: g.kind, vertexCount: g.vertex_count, radiusMeters: g.radius_m })),
    [`imported ${created.length} ${mode} geofence(s) into account ${accountId}:`, ...created.map((g) => `  ${g.id}  ${g.name} (${g.kind}, ${g.vertex_count} vertices)`)],
  );
}

import { sql, type RawBuilder } from 'kysely';
import type { StoredFix } from '../domain/stored-rows.ts';
import { finiteOrNull, int4OrNull } from './column-values.ts';
import type { PositionsTable } from './schema.ts';

type ColumnValue = string | number | boolean | null;

interface PositionColumn {
  /** The PostgreSQL array type the column's values are sent as through `unnest`. */
  arrayType: string;
  value(fix: StoredFix): ColumnValue;
}

/**
 * A history row's columns, once, keyed by the row type's columns (so one added to `PositionsTable`
 * does not compile until it is here): the INSERT the embedded database writes with
 * (position-batches.ts) and the COPY PostgreSQL streams with (position-copy.ts) both read them from
 * here, so the two can never store a fix differently. A value PostgreSQL would refuse (NaN, an
 * integer out of range) is stored as null, the decoders' "unknown".
 */
const COLUMNS: { readonly [C in keyof PositionsTable]: PositionColumn } = {
  device_id: { arrayType: 'int[]', value: (f) => f.deviceId },
  fix_time: { arrayType: 'timestamptz[]', value: (f) => f.fixTime.toISOString() },
  server_time: { arrayType: 'timestamptz[]', value: (f) => f.receivedAt.toISOString() },
  valid: { arrayType: 'bool[]', value: (f) => f.valid },
  latitude: { arrayType: 'float8[]', value: (f) => f.latitude },
  longitude: { arrayType: 'float8[]', value: (f) => f.longitude },
  altitude: { arrayType: 'float8[]', value: (f) => finiteOrNull(f.altitude) },
  speed_kmh: { arrayType: 'float8[]', value: (f) => finiteOrNull(f.speedKmh) },
  heading: { arrayType: 'float8[]', value: (f) => finiteOrNull(f.heading) },
  satellites: { arrayType: 'int[]', value: (f) => int4OrNull(f.satellites) },
  ignition: { arrayType: 'bool[]', value: (f) => f.ignition ?? null },
  attributes: { arrayType: 'jsonb[]', value: (f) => JSON.stringify(f.attributes ?? {}) },
};

const POSITION_COLUMNS = Object.entries(COLUMNS).map(([name, column]) => ({ name, ...column }));

/** `device_id, fix_time, …`: the column list both statements name. */
export const POSITION_COLUMN_LIST = POSITION_COLUMNS.map((c) => c.name).join(', ');

/** The batch as one array per column, each cast to its type, for `SELECT * FROM unnest(…)`. */
export function positionArrays(fixes: readonly StoredFix[]): RawBuilder<unknown> {
  return sql.join(POSITION_COLUMNS.map((c) => sql`${fixes.map(c.value)}::${sql.raw(c.arrayType)}`));
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A value in COPY's text format: `\N` for null, `t`/`f`, and the format's escapes in text. */
function copyText(value: ColumnValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'string') return value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!);
  return String(value);
}

/** One fix as a line of COPY text, its columns in POSITION_COLUMNS' order. */
export function positionCopyLine(fix: StoredFix): string {
  let line = '';
  for (let i = 0; i < POSITION_COLUMNS.length; i++) line += (i === 0 ? '' : '\t') + copyText(POSITION_COLUMNS[i]!.value(fix));
  return `${line}\n`;
}

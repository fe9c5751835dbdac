import { sql, type RawBuilder } from 'kysely';
import type { StoredFix } from '../domain/stored-rows.ts';
import { attributesJson } from './attributes-json.ts';
import { finiteOrNull, int4OrNull } from './column-values.ts';
import type { PositionsTable } from './schema.ts';

type ColumnValue = string | number | boolean | Date | null;

/** PostgreSQL types of the history's columns, each with its array type (unnest) and binary form (COPY). */
type ColumnType = 'int4' | 'timestamptz' | 'bool' | 'float8' | 'json';

const ARRAY_TYPES: Record<ColumnType, string> = { int4: 'int[]', timestamptz: 'timestamptz[]', bool: 'bool[]', float8: 'float8[]', json: 'json[]' };

interface PositionColumn {
  type: ColumnType;
  /** A number for int4 and float8, a Date for timestamptz, JSON text for json; null for none. */
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
  device_id: { type: 'int4', value: (f) => f.deviceId },
  fix_time: { type: 'timestamptz', value: (f) => f.fixTime },
  server_time: { type: 'timestamptz', value: (f) => f.receivedAt },
  valid: { type: 'bool', value: (f) => f.valid },
  latitude: { type: 'float8', value: (f) => f.latitude },
  longitude: { type: 'float8', value: (f) => f.longitude },
  altitude: { type: 'float8', value: (f) => finiteOrNull(f.altitude) },
  speed_kmh: { type: 'float8', value: (f) => finiteOrNull(f.speedKmh) },
  heading: { type: 'float8', value: (f) => finiteOrNull(f.heading) },
  satellites: { type: 'int4', value: (f) => int4OrNull(f.satellites) },
  ignition: { type: 'bool', value: (f) => f.ignition ?? null },
  attributes: { type: 'json', value: (f) => attributesJson(f) },
};

const POSITION_COLUMNS = Object.entries(COLUMNS).map(([name, column]) => ({ name, ...column }));

/** `device_id, fix_time, …`: the column list both statements name. */
export const POSITION_COLUMN_LIST = POSITION_COLUMNS.map((c) => c.name).join(', ');

/** The batch as one array per column, each cast to its type, for `SELECT * FROM unnest(…)`. */
export function positionArrays(fixes: readonly StoredFix[]): RawBuilder<unknown> {
  return sql.join(POSITION_COLUMNS.map((c) => {
    const values = fixes.map((f) => {
      const v = c.value(f);
      return v instanceof Date ? v.toISOString() : v;
    });
    return sql`${values}::${sql.raw(ARRAY_TYPES[c.type])}`;
  }));
}

/** PostgreSQL's binary timestamps count microseconds from 2000-01-01 UTC. */
const POSTGRES_EPOCH_MS = Date.UTC(2000, 0, 1);
/** COPY's binary header: signature, flags, header extension length. */
const BINARY_HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
const BINARY_TRAILER = Buffer.from([0xff, 0xff]);

/**
 * Rows in COPY's binary format, in POSITION_COLUMNS' order: `header` before the first row, `trailer`
 * after the last. Binary spares PostgreSQL parsing each number and time from text (measured: a
 * 7,000-row batch's COPY ~25 % shorter); json's binary form is its text.
 */
export function positionCopyBinary(fixes: readonly StoredFix[], edges: { header: boolean; trailer: boolean }): Buffer {
  const json: string[] = [];
  let size = (edges.header ? BINARY_HEADER.length : 0) + (edges.trailer ? BINARY_TRAILER.length : 0);
  for (const fix of fixes) {
    const text = attributesJson(fix);
    json.push(text);
    // Per row: the field count, then per field its length and bytes (at most 8, or the JSON).
    size += 2 + POSITION_COLUMNS.length * 12 + Buffer.byteLength(text, 'utf8');
  }
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  if (edges.header) at += BINARY_HEADER.copy(out, at);
  for (let row = 0; row < fixes.length; row++) {
    const fix = fixes[row]!;
    at = out.writeInt16BE(POSITION_COLUMNS.length, at);
    for (const column of POSITION_COLUMNS) {
      if (column.type === 'json') {
        // Written straight into the row, its length filled in after: no buffer per row.
        const written = out.write(json[row]!, at + 4, 'utf8');
        out.writeInt32BE(written, at);
        at += 4 + written;
        continue;
      }
      const value = column.value(fix);
      if (value === null) {
        at = out.writeInt32BE(-1, at);
        continue;
      }
      switch (column.type) {
        case 'int4':
          at = out.writeInt32BE(4, at);
          at = out.writeInt32BE(value as number, at);
          break;
        case 'float8':
          at = out.writeInt32BE(8, at);
          at = out.writeDoubleBE(value as number, at);
          break;
        case 'bool':
          at = out.writeInt32BE(1, at);
          at = out.writeUInt8(value ? 1 : 0, at);
          break;
        case 'timestamptz': {
          // Microseconds as a big-endian int64 in two halves: exact below 2^53, and no BigInt per value.
          const micros = ((value as Date).getTime() - POSTGRES_EPOCH_MS) * 1000;
          const high = Math.floor(micros / 2 ** 32);
          at = out.writeInt32BE(8, at);
          at = out.writeInt32BE(high, at);
          at = out.writeUInt32BE(micros - high * 2 ** 32, at);
          break;
        }
      }
    }
  }
  if (edges.trailer) at += BINARY_TRAILER.copy(out, at);
  return out.subarray(0, at);
}

import type { Db } from '../../db/database.ts';
import { positionsAfter, type PositionRange, type PositionRow } from '../../db/position-history.ts';
import { csvField } from '../../domain/csv-field.ts';
import { roundCoordinate, roundHeading, roundMetres, roundSpeedKmh } from '../../domain/display-precision.ts';
import { isoInZone } from '../../domain/time/zoned-time.ts';
import { odometerKm } from './position-view.ts';

/** RFC 4180: one header row, CRLF line ends, fields holding a comma, quote, CR or LF quoted with quotes doubled. */
export const POSITION_CSV_COLUMNS = [
  'fixTime', 'fixTimeLocal', 'lat', 'lng', 'speedKmh', 'heading', 'altitude', 'satellites', 'ignition', 'odometerKm', 'valid', 'attributes',
] as const;

const value = (v: number | boolean | null) => (v === null ? '' : String(v));

/** Parses the attributes only when they can hold an odometer. */
const odometerOf = (attributes: string) => (attributes.includes('"odometer"') ? odometerKm(JSON.parse(attributes) as Record<string, unknown>) : null);

/** One fix as a CSV line: times in UTC and in the user's zone, numbers rounded as the JSON answers, null as an empty field, attributes as JSON. */
export function positionCsvLine(r: PositionRow, timeZone: string): string {
  return (
    `${r.fix_time.toISOString()},${isoInZone(r.fix_time, timeZone)},${roundCoordinate(r.latitude)},${roundCoordinate(r.longitude)},` +
    `${value(roundSpeedKmh(r.speed_kmh))},${value(roundHeading(r.heading))},${value(roundMetres(r.altitude))},` +
    `${value(r.satellites)},${value(r.ignition)},${value(odometerOf(r.attributes))},${r.valid},` +
    `${csvField(r.attributes)}\r\n`
  );
}

export interface CsvExport {
  rows: number;
  batches: number;
  /** complete; cancelled: the client went away and reading stopped there; failed: a query failed. */
  outcome: 'complete' | 'cancelled' | 'failed';
  error?: unknown;
}

/**
 * A whole range as a CSV byte stream, read `batchRows` fixes per keyset query only when the client
 * asks for more (a pull stream: a slow client holds back the reading, and memory holds one batch).
 * Between batches the database serves other requests. A client that goes away cancels the stream:
 * no further batch is read. A query that fails errors the stream, so the response is cut off rather
 * than ending as if complete. `first` is the first batch, read before the answer starts so that a
 * failure there is an ordinary error answer.
 */
export function positionCsvStream(
  db: Db,
  range: PositionRange,
  timeZone: string,
  batchRows: number,
  first: PositionRow[],
  onEnd: (result: CsvExport) => void,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let rows = 0;
  let batches = 0;
  let cancelled = false;
  let next: PositionRow[] | undefined = first;
  let lastFixTime: Date | undefined;
  let done = false;
  const end = (outcome: CsvExport['outcome'], error?: unknown) => {
    if (done) return;
    done = true;
    onEnd({ rows, batches, outcome, ...(error === undefined ? {} : { error }) });
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let text = batches === 0 ? `${POSITION_CSV_COLUMNS.join(',')}\r\n` : '';
        let batch = next;
        if (!batch) {
          try {
            batch = await positionsAfter(db, range, lastFixTime, batchRows);
          } catch (error) {
            if (!cancelled) controller.error(error);
            return end('failed', error);
          }
          if (cancelled) return;
        }
        next = undefined;
        batches++;
        for (const r of batch) text += positionCsvLine(r, timeZone);
        rows += batch.length;
        if (text) controller.enqueue(encoder.encode(text));
        if (batch.length < batchRows) {
          controller.close();
          end('complete');
        } else {
          lastFixTime = batch[batch.length - 1]!.fix_time;
        }
      },
      cancel() {
        cancelled = true;
        end('cancelled');
      },
    },
    { highWaterMark: 0 },
  );
}

// Times between the API and the console's inputs. The API writes a time as `{ local, utc }`, each
// `dd/mm/yyyy HH:mm`, local in the user's time zone; a datetime-local input holds a wall-clock time
// with no zone, read here in the user's zone (not the browser's, which may differ).

/** A time as the API writes it, an ISO string, or a dash for none. */
export const timeText = (time) => (!time ? '—' : typeof time === 'string' ? new Date(time).toLocaleString() : time.local);

/** The wall clock in `timeZone` at `instant`, as its parts in numbers. */
function wallClock(instant, timeZone) {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-GB', {
    timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
  }).formatToParts(instant).map((p) => [p.type, Number(p.value)]));
  return parts;
}

const DISPLAY = /^(\d{2})\/(\d{2})\/(\d{4}) (\d{2}):(\d{2})/;

/** A time the API wrote (`{ local: '02/01/2031 08:30', utc }`) as a datetime-local value of its local part; '' for none. */
export function localInputValue(time) {
  const m = DISPLAY.exec(time?.local ?? '');
  return m ? `${m[3]}-${m[2]}-${m[1]}T${m[4]}:${m[5]}` : '';
}

/** A time the API wrote, as milliseconds since the epoch (from its UTC part); NaN for none. */
export function epochOf(time) {
  const m = DISPLAY.exec(time?.utc ?? '');
  return m ? Date.UTC(+m[3], +m[2] - 1, +m[1], +m[4], +m[5]) : Number.NaN;
}

/** A datetime-local value read in `timeZone`, as an ISO 8601 UTC instant; undefined for ''. */
export function instantOfLocal(value, timeZone) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(value);
  if (!m) return undefined;
  const wanted = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5]);
  // The zone's offset at the guess, applied, then checked again once (a guess across a DST change).
  let instant = wanted;
  for (let i = 0; i < 2; i++) {
    const c = wallClock(new Date(instant), timeZone);
    instant += wanted - Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute, c.second);
  }
  return new Date(instant).toISOString();
}

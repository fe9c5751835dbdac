/**
 * Wall-clock times in IANA timezones, with Intl only: the API speaks `dd/MM/yyyy HH:mm` in the
 * key's user's timezone and stores UTC.
 */

export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export interface TimeObject {
  local: string;
  utc: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

export function isValidTimeZone(timeZone: string): boolean {
  if (!timeZone || timeZone.length > 64) return false;
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

export function wallClockAt(instantMs: number, timeZone: string): WallClock {
  const clock: WallClock = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of formatterFor(timeZone).formatToParts(instantMs)) {
    if (part.type in clock) clock[part.type as keyof WallClock] = Number(part.value);
  }
  return clock;
}

function wallClockAsUtcMs(c: WallClock): number {
  return Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute, c.second);
}

/** Offset of `timeZone` from UTC at an instant, in ms (positive east of Greenwich). */
function offsetMs(instantMs: number, timeZone: string): number {
  const whole = Math.floor(instantMs / 1000) * 1000;
  return wallClockAsUtcMs(wallClockAt(whole, timeZone)) - whole;
}

/**
 * The instant a wall-clock time denotes in `timeZone`. In a repeated hour (clocks going back) the
 * earlier instant wins; in a skipped hour (clocks going forward) the time is read with the offset
 * before the change, landing after the gap, as Temporal's "compatible" disambiguation does.
 */
export function wallClockToInstant(clock: WallClock, timeZone: string): Date {
  const asUtc = wallClockAsUtcMs(clock);
  const before = offsetMs(asUtc - 86_400_000, timeZone);
  const after = offsetMs(asUtc + 86_400_000, timeZone);
  const consistent = [asUtc - before, asUtc - after].filter((t) => offsetMs(t, timeZone) === asUtc - t);
  if (consistent.length > 0) return new Date(Math.min(...consistent));
  return new Date(asUtc - Math.min(before, after));
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function formatClock(c: WallClock): string {
  return `${pad(c.day)}/${pad(c.month)}/${pad(c.year, 4)} ${pad(c.hour)}:${pad(c.minute)}`;
}

/** `dd/MM/yyyy HH:mm` in `timeZone`; seconds are truncated. */
export function formatLocal(instant: Date, timeZone: string): string {
  return formatClock(wallClockAt(instant.getTime(), timeZone));
}

export function formatUtc(instant: Date): string {
  const d = instant;
  return formatClock({
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: 0,
  });
}

const QUARTER_HOUR_MS = 900_000;
const offsetsByZone = new Map<string, Map<number, number>>();

/**
 * The zone's offset at an instant, remembered per quarter hour: since 1970 every offset is a whole
 * number of quarter hours and changes at a local quarter hour, so it is constant within each UTC
 * quarter hour. A report of thousands of rows then asks Intl (microseconds a call) once per quarter
 * hour it spans instead of once per time.
 */
function quarterHourOffsetMs(ms: number, timeZone: string): number {
  let offsets = offsetsByZone.get(timeZone);
  if (!offsets) offsetsByZone.set(timeZone, (offsets = new Map()));
  const bucket = Math.floor(ms / QUARTER_HOUR_MS);
  let offset = offsets.get(bucket);
  if (offset === undefined) {
    if (offsets.size >= 100_000) offsets.clear();
    offset = offsetMs(bucket * QUARTER_HOUR_MS, timeZone);
    offsets.set(bucket, offset);
  }
  return offset;
}

/**
 * ISO 8601 to the second in `timeZone`, with its offset (`2024-05-01T09:30:05+02:00`): the user's wall
 * clock and the exact instant in one string any date library parses.
 */
export function isoInZone(instant: Date, timeZone: string): string {
  const ms = instant.getTime();
  const offset = quarterHourOffsetMs(ms, timeZone);
  const w = new Date(ms + offset);
  const c = { year: w.getUTCFullYear(), month: w.getUTCMonth() + 1, day: w.getUTCDate(), hour: w.getUTCHours(), minute: w.getUTCMinutes(), second: w.getUTCSeconds() };
  const offsetMinutes = Math.round(offset / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${pad(c.year, 4)}-${pad(c.month)}-${pad(c.day)}T${pad(c.hour)}:${pad(c.minute)}:${pad(c.second)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

export function timeObject(instant: Date, timeZone: string): TimeObject {
  return { local: formatLocal(instant, timeZone), utc: formatUtc(instant) };
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function validClock(c: WallClock): boolean {
  return (
    c.year >= 1970 && c.year <= 9999 &&
    c.month >= 1 && c.month <= 12 &&
    c.day >= 1 && c.day <= daysInMonth(c.year, c.month) &&
    c.hour <= 23 && c.minute <= 59 && c.second <= 59
  );
}

const DISPLAY_TIME = /^(\d{2})\/(\d{2})\/(\d{4}) (\d{2}):(\d{2})$/;

/** Parses the API's `dd/MM/yyyy HH:mm` in `timeZone`; undefined when the text is not exactly that shape or not a real date. */
export function parseDisplayTime(text: string, timeZone: string): Date | undefined {
  const m = DISPLAY_TIME.exec(text);
  if (!m) return undefined;
  const clock = { day: +m[1]!, month: +m[2]!, year: +m[3]!, hour: +m[4]!, minute: +m[5]!, second: 0 };
  return validClock(clock) ? wallClockToInstant(clock, timeZone) : undefined;
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/;

export interface IsoBound {
  instant: Date;
  dateOnly: boolean;
}

/**
 * Parses an ISO date (`2024-05-01`) or date-time to the minute or second (`2024-05-01T08:30`) as wall
 * clock in `timeZone`. A date alone means the start of that day, or with `endOfDay` its last millisecond.
 */
export function parseIsoLocal(text: string, timeZone: string, endOfDay: boolean): IsoBound | undefined {
  const m = ISO_DATE_TIME.exec(text);
  if (!m) return undefined;
  const dateOnly = m[4] === undefined;
  const clock = {
    year: +m[1]!,
    month: +m[2]!,
    day: +m[3]!,
    hour: dateOnly ? 0 : +m[4]!,
    minute: dateOnly ? 0 : +m[5]!,
    second: m[6] === undefined ? 0 : +m[6],
  };
  if (!validClock(clock)) return undefined;
  if (dateOnly && endOfDay) {
    const next = new Date(Date.UTC(clock.year, clock.month - 1, clock.day + 1));
    const startOfNext = wallClockToInstant(
      { year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate(), hour: 0, minute: 0, second: 0 },
      timeZone,
    );
    return { instant: new Date(startOfNext.getTime() - 1), dateOnly };
  }
  return { instant: wallClockToInstant(clock, timeZone), dateOnly };
}

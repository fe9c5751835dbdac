/**
 * Milliseconds since the epoch for a UTC calendar time, as `Date.UTC(year, month - 1, …)` gives it
 * (months are 1-12 here), odd values rolling over the same way (month 13 is January of the next year,
 * day 0 the last day of the previous month, hour 24 the next day). Plain arithmetic: Date.UTC is a
 * call into the runtime that costs about 4× as much, and binary trackers send a timestamp per fix.
 */
export function utcMillis(year: number, month: number, day: number, hours: number, minutes: number, seconds: number): number {
  const months = month - 1;
  const y = year + Math.floor(months / 12);
  const m = months - Math.floor(months / 12) * 12 + 1;
  return (daysFromCivil(y, m, 1) + day - 1) * 86_400_000 + hours * 3_600_000 + minutes * 60_000 + seconds * 1000;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year; // count the year from March, so the leap day comes last
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

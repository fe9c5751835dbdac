import { describe, expect, it } from 'vitest';
import {
  formatLocal,
  formatUtc,
  isoInZone,
  isValidTimeZone,
  parseDisplayTime,
  parseIsoLocal,
  timeObject,
  wallClockAt,
  wallClockToInstant,
} from './zoned-time.ts';

const MX = 'America/Mexico_City'; // UTC-6 all year since 2022
const IN = 'Asia/Kolkata'; // UTC+5:30, no DST
const NY = 'America/New_York'; // DST: 2024-03-10 02:00 → 03:00, 2024-11-03 02:00 → 01:00
const UTC = 'UTC';

const at = (iso: string) => new Date(iso);
const iso = (d: Date | undefined) => d?.toISOString();

describe('formatting', () => {
  it('formats dd/MM/yyyy HH:mm in the zone and in UTC', () => {
    const instant = at('2024-05-01T14:30:00Z');
    expect(formatLocal(instant, MX)).toBe('01/05/2024 08:30');
    expect(formatLocal(instant, IN)).toBe('01/05/2024 20:00');
    expect(formatLocal(instant, UTC)).toBe('01/05/2024 14:30');
    expect(formatUtc(instant)).toBe('01/05/2024 14:30');
  });

  it('crosses the date line of the zone: previous day in Mexico, next day in Kolkata', () => {
    const instant = at('2024-01-01T03:45:00Z');
    expect(formatLocal(instant, MX)).toBe('31/12/2023 21:45');
    expect(formatLocal(at('2023-12-31T19:00:00Z'), IN)).toBe('01/01/2024 00:30');
    expect(formatUtc(instant)).toBe('01/01/2024 03:45');
  });

  it('truncates seconds and milliseconds rather than rounding', () => {
    const instant = at('2024-05-01T14:30:59.999Z');
    expect(formatLocal(instant, MX)).toBe('01/05/2024 08:30');
    expect(formatUtc(instant)).toBe('01/05/2024 14:30');
  });

  it('writes midnight as 00, not 24, and pads every field', () => {
    expect(formatLocal(at('2024-02-03T06:05:00Z'), MX)).toBe('03/02/2024 00:05');
    expect(formatUtc(at('2024-02-03T00:00:00Z'))).toBe('03/02/2024 00:00');
  });

  it('builds time objects from one instant', () => {
    const instant = at('2024-05-01T14:30:00Z');
    expect(timeObject(instant, MX)).toEqual({ local: '01/05/2024 08:30', utc: '01/05/2024 14:30' });
    expect(timeObject(instant, IN)).toEqual({ local: '01/05/2024 20:00', utc: '01/05/2024 14:30' });
    expect(timeObject(instant, UTC)).toEqual({ local: '01/05/2024 14:30', utc: '01/05/2024 14:30' });
  });

  it('follows DST in New York', () => {
    expect(formatLocal(at('2024-01-15T12:00:00Z'), NY)).toBe('15/01/2024 07:00'); // EST, -5
    expect(formatLocal(at('2024-07-15T12:00:00Z'), NY)).toBe('15/07/2024 08:00'); // EDT, -4
    expect(formatLocal(at('2024-03-10T06:59:00Z'), NY)).toBe('10/03/2024 01:59');
    expect(formatLocal(at('2024-03-10T07:00:00Z'), NY)).toBe('10/03/2024 03:00');
    expect(formatLocal(at('2024-11-03T05:30:00Z'), NY)).toBe('03/11/2024 01:30');
    expect(formatLocal(at('2024-11-03T06:30:00Z'), NY)).toBe('03/11/2024 01:30');
  });

  it('reads wall clocks with seconds', () => {
    expect(wallClockAt(Date.parse('2024-05-01T14:30:45Z'), IN)).toEqual({ year: 2024, month: 5, day: 1, hour: 20, minute: 0, second: 45 });
  });
});

describe('parseDisplayTime', () => {
  it('reads dd/MM/yyyy HH:mm as wall-clock time of the zone', () => {
    expect(iso(parseDisplayTime('01/05/2024 08:30', MX))).toBe('2024-05-01T14:30:00.000Z');
    expect(iso(parseDisplayTime('01/05/2024 20:00', IN))).toBe('2024-05-01T14:30:00.000Z');
    expect(iso(parseDisplayTime('01/05/2024 14:30', UTC))).toBe('2024-05-01T14:30:00.000Z');
    expect(iso(parseDisplayTime('01/01/2024 00:00', IN))).toBe('2023-12-31T18:30:00.000Z');
    expect(iso(parseDisplayTime('31/12/2023 23:59', MX))).toBe('2024-01-01T05:59:00.000Z');
  });

  it('accepts 29 February only in a leap year', () => {
    expect(iso(parseDisplayTime('29/02/2024 10:00', UTC))).toBe('2024-02-29T10:00:00.000Z');
    expect(parseDisplayTime('29/02/2023 10:00', UTC)).toBeUndefined();
    expect(iso(parseDisplayTime('29/02/2000 10:00', UTC))).toBe('2000-02-29T10:00:00.000Z');
    expect(parseDisplayTime('29/02/2100 10:00', UTC)).toBeUndefined();
  });

  it('rejects anything but the exact shape', () => {
    for (const text of [
      '1/5/2024 08:00',
      '01/5/2024 08:00',
      '01/05/24 08:00',
      '01/05/2024 8:00',
      '01/05/2024 08:00:00',
      '01/05/2024T08:00',
      '01-05-2024 08:00',
      '2024-05-01 08:00',
      ' 01/05/2024 08:00',
      '01/05/2024 08:00 ',
      '01/05/2024  08:00',
      '01/05/2024',
      '01/05/2024 08:00\n',
      '０１/05/2024 08:00', // full-width digits
      '',
    ]) {
      expect(parseDisplayTime(text, MX), JSON.stringify(text)).toBeUndefined();
    }
  });

  it('rejects dates and times that do not exist', () => {
    for (const text of ['31/02/2024 10:00', '31/04/2024 10:00', '00/05/2024 10:00', '01/13/2024 10:00', '01/00/2024 10:00', '01/05/2024 24:00', '01/05/2024 23:60']) {
      expect(parseDisplayTime(text, MX), text).toBeUndefined();
    }
    expect(iso(parseDisplayTime('31/01/2024 23:59', UTC))).toBe('2024-01-31T23:59:00.000Z');
  });

  it('round-trips with formatLocal in every zone', () => {
    for (const zone of [MX, IN, UTC, NY]) {
      for (const text of ['01/05/2024 08:30', '29/02/2024 00:00', '31/12/2024 23:59', '15/01/2030 12:07']) {
        const instant = parseDisplayTime(text, zone);
        expect(instant, `${zone} ${text}`).toBeInstanceOf(Date);
        expect(formatLocal(instant!, zone), `${zone} ${text}`).toBe(text);
      }
    }
    const instant = at('2024-08-09T10:11:00Z');
    expect(parseDisplayTime(formatLocal(instant, IN), IN)?.getTime()).toBe(instant.getTime());
  });

  it('resolves a time in the spring-forward gap to after the gap (02:30 → 03:30 EDT)', () => {
    const instant = parseDisplayTime('10/03/2024 02:30', NY);
    expect(iso(instant)).toBe('2024-03-10T07:30:00.000Z');
    expect(formatLocal(instant!, NY)).toBe('10/03/2024 03:30');
    // Either side of the gap is exact.
    expect(iso(parseDisplayTime('10/03/2024 01:59', NY))).toBe('2024-03-10T06:59:00.000Z');
    expect(iso(parseDisplayTime('10/03/2024 03:00', NY))).toBe('2024-03-10T07:00:00.000Z');
  });

  it('resolves a repeated fall-back time to the earlier instant (01:30 EDT)', () => {
    expect(iso(parseDisplayTime('03/11/2024 01:30', NY))).toBe('2024-11-03T05:30:00.000Z');
    expect(iso(parseDisplayTime('03/11/2024 00:59', NY))).toBe('2024-11-03T04:59:00.000Z');
    expect(iso(parseDisplayTime('03/11/2024 02:00', NY))).toBe('2024-11-03T07:00:00.000Z');
  });
});

describe('wallClockToInstant', () => {
  it('keeps seconds and applies the offset in force at that wall time', () => {
    expect(iso(wallClockToInstant({ year: 2024, month: 7, day: 4, hour: 12, minute: 0, second: 30 }, NY))).toBe('2024-07-04T16:00:30.000Z');
    expect(iso(wallClockToInstant({ year: 2024, month: 1, day: 4, hour: 12, minute: 0, second: 30 }, NY))).toBe('2024-01-04T17:00:30.000Z');
  });
});

describe('parseIsoLocal', () => {
  it('reads a date alone as the start of that local day', () => {
    expect(parseIsoLocal('2024-05-01', MX, false)).toEqual({ instant: at('2024-05-01T06:00:00.000Z'), dateOnly: true });
    expect(parseIsoLocal('2024-05-01', IN, false)).toEqual({ instant: at('2024-04-30T18:30:00.000Z'), dateOnly: true });
    expect(parseIsoLocal('2024-05-01', UTC, false)).toEqual({ instant: at('2024-05-01T00:00:00.000Z'), dateOnly: true });
  });

  it('reads a date alone as an end bound at the last millisecond before the next local midnight', () => {
    expect(parseIsoLocal('2024-05-01', MX, true)).toEqual({ instant: at('2024-05-02T05:59:59.999Z'), dateOnly: true });
    expect(parseIsoLocal('2024-05-01', IN, true)).toEqual({ instant: at('2024-05-01T18:29:59.999Z'), dateOnly: true });
    expect(parseIsoLocal('2024-12-31', UTC, true)).toEqual({ instant: at('2024-12-31T23:59:59.999Z'), dateOnly: true });
    expect(parseIsoLocal('2024-02-29', UTC, true)?.instant).toEqual(at('2024-02-29T23:59:59.999Z'));
  });

  it('gives DST days their true length: 23 h in spring, 25 h in autumn', () => {
    const span = (date: string) => parseIsoLocal(date, NY, true)!.instant.getTime() + 1 - parseIsoLocal(date, NY, false)!.instant.getTime();
    expect(span('2024-03-10')).toBe(23 * 3_600_000);
    expect(span('2024-11-03')).toBe(25 * 3_600_000);
    expect(span('2024-06-01')).toBe(24 * 3_600_000);
    expect(parseIsoLocal('2024-03-10', NY, true)?.instant).toEqual(at('2024-03-11T03:59:59.999Z'));
  });

  it('reads date-times to the minute or second, with T or a space, ignoring endOfDay', () => {
    expect(parseIsoLocal('2024-05-01T08:30', MX, false)).toEqual({ instant: at('2024-05-01T14:30:00.000Z'), dateOnly: false });
    expect(parseIsoLocal('2024-05-01T08:30', MX, true)).toEqual({ instant: at('2024-05-01T14:30:00.000Z'), dateOnly: false });
    expect(parseIsoLocal('2024-05-01 08:30', IN, false)).toEqual({ instant: at('2024-05-01T03:00:00.000Z'), dateOnly: false });
    expect(parseIsoLocal('2024-05-01T08:30:15', UTC, true)).toEqual({ instant: at('2024-05-01T08:30:15.000Z'), dateOnly: false });
    expect(parseIsoLocal('2024-05-01T00:00', MX, true)?.instant).toEqual(at('2024-05-01T06:00:00.000Z'));
  });

  it('rejects garbage, partial and impossible values', () => {
    for (const text of [
      '',
      'yesterday',
      '2024-5-1',
      '2024-05',
      '24-05-01',
      '01/05/2024',
      '2024-05-01T',
      '2024-05-01T08',
      '2024-05-01T8:30',
      '2024-05-01T08:30Z',
      '2024-05-01T08:30:00.000',
      '2024-05-01T08:30+02:00',
      ' 2024-05-01',
      '2024-05-01 ',
      '2024-02-30',
      '2023-02-29',
      '2024-13-01',
      '2024-00-10',
      '2024-05-01T24:00',
      '2024-05-01T23:60',
      '2024-05-01T23:59:60',
    ]) {
      expect(parseIsoLocal(text, MX, false), JSON.stringify(text)).toBeUndefined();
      expect(parseIsoLocal(text, MX, true), JSON.stringify(text)).toBeUndefined();
    }
  });
});

describe('isValidTimeZone', () => {
  it('accepts IANA names and UTC', () => {
    for (const zone of [MX, IN, NY, UTC, 'Europe/London', 'Asia/Kathmandu']) expect(isValidTimeZone(zone), zone).toBe(true);
  });

  it('rejects empty, unknown, and oversized names', () => {
    for (const zone of ['', 'Mars/Olympus_Mons', 'America/Nowhere', 'not a zone', 'a'.repeat(65), `${MX}${'x'.repeat(64)}`]) {
      expect(isValidTimeZone(zone), zone).toBe(false);
    }
  });
});

describe('isoInZone', () => {
  it('writes the wall clock with the offset in force at that instant', () => {
    expect(isoInZone(new Date('2024-05-01T07:30:05.900Z'), 'Europe/Madrid')).toBe('2024-05-01T09:30:05+02:00');
    expect(isoInZone(new Date('2024-01-15T07:30:05Z'), 'Europe/Madrid')).toBe('2024-01-15T08:30:05+01:00');
    expect(isoInZone(new Date('2024-05-01T12:00:00Z'), 'America/Mexico_City')).toBe('2024-05-01T06:00:00-06:00');
    expect(isoInZone(new Date('2024-05-01T12:00:00Z'), 'Asia/Kolkata')).toBe('2024-05-01T17:30:00+05:30');
    expect(isoInZone(new Date('2024-05-01T12:00:00Z'), 'UTC')).toBe('2024-05-01T12:00:00+00:00');
  });

  it('agrees with Intl for any instant, across transitions, in zones with odd offsets', () => {
    const zones = ['Europe/Madrid', 'America/Mexico_City', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/St_Johns', 'Pacific/Chatham'];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 3000; i++) {
      const zone = zones[i % zones.length]!;
      const instant = new Date(Date.UTC(1990, 0, 1) + Math.floor(random() * 40 * 365 * 86_400) * 1000);
      const c = wallClockAt(instant.getTime(), zone);
      const wall = `${String(c.year).padStart(4, '0')}-${String(c.month).padStart(2, '0')}-${String(c.day).padStart(2, '0')}T${String(c.hour).padStart(2, '0')}:${String(c.minute).padStart(2, '0')}:${String(c.second).padStart(2, '0')}`;
      const iso = isoInZone(instant, zone);
      expect(iso.slice(0, 19), `${zone} ${instant.toISOString()}`).toBe(wall);
      expect(new Date(iso).getTime()).toBe(Math.floor(instant.getTime() / 1000) * 1000);
    }
  });

  it('parses back to the same instant (to the second)', () => {
    const t = new Date('2024-10-27T00:59:59Z'); // the hour before Madrid's clocks go back
    expect(new Date(isoInZone(t, 'Europe/Madrid')).getTime()).toBe(t.getTime());
    expect(new Date(isoInZone(new Date(t.getTime() + 3_600_000), 'Europe/Madrid')).getTime()).toBe(t.getTime() + 3_600_000);
  });
});

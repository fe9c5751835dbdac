import { describe, expect, it } from 'vitest';
import type { EngineFix } from '../engine-step/engine-state.ts';
import { eventDataJson, type NewEvent } from '../events/event-payloads.ts';
import { DEFAULT_TRIP_SETTINGS } from '../trips/device-trips.ts';
import { DEFAULT_DRIVING_SETTINGS, evaluateDriving } from './driving-behaviour.ts';

const T0 = Date.UTC(2024, 4, 1, 14, 0, 0);

const fix = (s: number, speedKmh: number, more: Partial<EngineFix> = {}): EngineFix => ({
  deviceId: 7, fixTime: new Date(T0 + s * 1000), valid: true, latitude: 19.4, longitude: -99.1, speedKmh, heading: 0, ignition: true,
  alarm: null, odometerKm: null, driverIdentifier: null, ...more,
});

/** An idle of 6 min, a hard take-off, a drive, and a stop the tracker reports as harsh braking. */
const DRIVE: EngineFix[] = [
  fix(0, 0), fix(120, 0), fix(240, 0), fix(360, 0),
  fix(361, 12), fix(362, 24), fix(372, 40),
  fix(373, 25, { alarm: 'hardBraking' }), fix(374, 10), fix(375, 0, { ignition: false }),
];

function run(fixes: EngineFix[], stored: Record<string, unknown> | null = null) {
  const events: NewEvent[] = [];
  const out = evaluateDriving(7, stored, DEFAULT_DRIVING_SETTINGS, DEFAULT_TRIP_SETTINGS, fixes, events);
  return { events, ...out };
}

describe('evaluateDriving', () => {
  it('builds the events with their payloads and dedupe keys, and counts harsh events per fix', () => {
    const { events, harshAt } = run(DRIVE);
    expect(events.map((e) => [e.type, (e.occurredAt.getTime() - T0) / 1000, e.dedupeKey])).toEqual([
      ['vehicle.harsh.acceleration', 361, `harsh:7:${T0 + 361_000}:acceleration`],
      ['vehicle.harsh.braking', 373, `harsh:7:${T0 + 373_000}:braking`],
      ['vehicle.idle.start', 0, `idle-start:7:${T0}`],
      ['vehicle.idle.end', 361, `idle-end:7:${T0}`],
    ]);
    expect(JSON.parse(eventDataJson(events[0]!))).toEqual({
      position: { lat: 19.4, lng: -99.1, speedKmh: 12, heading: 0, fixTime: new Date(T0 + 361_000).toISOString() },
      source: 'computed', accelerationMs2: 3.3, speedBeforeKmh: 0, speedAfterKmh: 12, intervalS: 1, alarm: null,
    });
    expect(events[1]!.data).toEqual({ source: 'tracker', accelerationMs2: null, speedBeforeKmh: null, speedAfterKmh: null, intervalS: null, alarm: 'hardBraking' });
    expect(events[3]!.data).toEqual({ idleSeconds: 361, since: new Date(T0).toISOString() });
    expect([...harshAt]).toEqual([0, 0, 0, 0, 1, 0, 0, 1, 0, 0]);
  });

  it('gives the same events over batches, its state stored as JSON between them', () => {
    const whole = run(DRIVE).events.map((e) => e.dedupeKey).sort();
    for (let cut = 1; cut < DRIVE.length; cut++) {
      const first = run(DRIVE.slice(0, cut));
      const stored = JSON.parse(JSON.stringify(first.state)) as Record<string, unknown>;
      const second = run(DRIVE.slice(cut), stored);
      expect([...first.events, ...second.events].map((e) => e.dedupeKey).sort(), `cut at ${cut}`).toEqual(whole);
    }
  });

  it('starts from nothing on a state stored before it existed, or unreadable', () => {
    expect(run(DRIVE, {}).events).toHaveLength(4);
    expect(run(DRIVE, { harsh: 'x', idle: 3 }).events).toHaveLength(4);
  });
});

import { describe, expect, it } from 'vitest';
import { eventDataJson, overspeedEvent, statusChangedEvent } from './event-payloads.ts';

// A fix as a GT06 decoder makes it: minutes / 30000 / 60, with the noise of the division.
const fix = { lat: 19.432600000000001, lng: -99.13320000000002, speedKmh: 42.57, heading: 90, fixTime: new Date('2024-05-01T14:30:00Z') };

describe('event payloads', () => {
  it('carry the position rounded as the API answers it: 7 decimals, speed and heading to 0.1', () => {
    const data = JSON.parse(eventDataJson(statusChangedEvent({ deviceId: 1, from: null, to: 'Moving', at: fix.fixTime, position: fix })));
    expect(data).toEqual({ position: { lat: 19.4326, lng: -99.1332, speedKmh: 42.6, heading: 90, fixTime: '2024-05-01T14:30:00.000Z' }, from: null, to: 'Moving' });
    expect(eventDataJson(statusChangedEvent({ deviceId: 1, from: null, to: 'Moving', at: fix.fixTime, position: fix }))).toContain('"lat":19.4326,"lng":-99.1332,');
  });

  it('keep an unknown speed or heading null, and round an overspeed\'s speed', () => {
    const data = JSON.parse(eventDataJson(overspeedEvent(1, { ...fix, heading: null }, 40)));
    expect(data.position).toMatchObject({ speedKmh: 42.6, heading: null });
    expect(data).toMatchObject({ speedKmh: 42.6, limitKmh: 40 });
    expect(JSON.parse(eventDataJson(overspeedEvent(1, { ...fix, speedKmh: null }, 40))).position.speedKmh).toBeNull();
  });
});

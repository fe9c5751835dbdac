import { describe, expect, it } from 'vitest';
import { BoundedQueue, feedFix, inFixTimeOrder, positionBatchBody, positionMessage, type FeedFix } from './position-feed.ts';

const vehicle = { id: '356307042441013', name: 'Truck 12', plates: 'ABC-123', imei: '356307042441013' };
const fix = (deviceId: number, fixTime: number, more: Partial<FeedFix> = {}): FeedFix => ({
  deviceId, fixTime, receivedAt: fixTime + 1_250, latitude: 19.43260001234, longitude: -99.13320004321, speedKmh: 32.04, heading: 90.06,
  altitude: 2240.04, satellites: 11, valid: true, ignition: true, motion: null, odometerKm: 10250.12549, powerVoltage: 12.6249, ...more,
});

describe('a vehicle.position message', () => {
  it('names the vehicle and the fix, with numbers rounded as the API answers them', () => {
    const message = positionMessage(vehicle, fix(7, Date.UTC(2024, 4, 1, 14, 30)));
    expect(message).toEqual({
      id: 'pos_356307042441013_1714573800000',
      type: 'vehicle.position',
      timestamp: '2024-05-01T14:30:00.000Z',
      data: {
        vehicle,
        position: {
          lat: 19.4326, lng: -99.1332, speedKmh: 32, heading: 90.1, fixTime: '2024-05-01T14:30:00.000Z', altitude: 2240, satellites: 11,
          valid: true, ignition: true, motion: null, odometerKm: 10250.125, powerVoltage: 12.62, receivedAt: '2024-05-01T14:30:01.250Z',
        },
      },
    });
  });

  it('is built from a stored fix, with absent fields as null', () => {
    const stored = { deviceId: 3, fixTime: new Date(1_000), receivedAt: new Date(2_000), valid: false, latitude: 1, longitude: 2 };
    expect(feedFix(stored)).toEqual({
      deviceId: 3, fixTime: 1_000, receivedAt: 2_000, latitude: 1, longitude: 2, speedKmh: null, heading: null, altitude: null, satellites: null,
      valid: false, ignition: null, motion: null, odometerKm: null, powerVoltage: null,
    });
  });

  it('goes out in batches of many positions in one body', () => {
    const body = JSON.parse(positionBatchBody('pos_x', new Date(5_000), [positionMessage(vehicle, fix(1, 1_000)), positionMessage(vehicle, fix(1, 2_000))]));
    expect(body).toMatchObject({ id: 'pos_x', type: 'vehicle.position', timestamp: '1970-01-01T00:00:05.000Z' });
    expect(body.data.events.map((e: { id: string }) => e.id)).toEqual([`pos_${vehicle.imei}_1000`, `pos_${vehicle.imei}_2000`]);
  });
});

describe('the order of a batch', () => {
  it('is fix time, each vehicle in its own fix-time order, equal times as committed', () => {
    const batch = [fix(1, 3_000), fix(2, 1_000), fix(1, 1_000), fix(2, 2_000), fix(1, 2_000), fix(3, 2_000)];
    const ordered = inFixTimeOrder(batch).map((f) => `${f.deviceId}@${f.fixTime}`);
    expect(ordered).toEqual(['2@1000', '1@1000', '2@2000', '1@2000', '3@2000', '1@3000']);
  });
});

describe('BoundedQueue', () => {
  it('hands items out first in, first out, in takes of at most n', () => {
    const q = new BoundedQueue<number>(100);
    q.push([1, 2, 3, 4, 5]);
    expect(q.take(2)).toEqual([1, 2]);
    expect(q.take(10)).toEqual([3, 4, 5]);
    expect(q.take(10)).toEqual([]);
    expect(q.dropped).toBe(0);
  });

  it('drops the oldest past its bound, and counts them', () => {
    const q = new BoundedQueue<number>(3);
    q.push([1, 2]);
    q.push([3, 4, 5]);
    expect(q.length).toBe(3);
    expect(q.dropped).toBe(2);
    expect(q.take(5)).toEqual([3, 4, 5]);
  });

  it('stays exact over many pushes and takes (its front is cut off as it goes)', () => {
    const q = new BoundedQueue<number>(5_000);
    let next = 0;
    let expected = 0;
    for (let round = 0; round < 200; round++) {
      q.push(Array.from({ length: 97 }, () => next++));
      for (const n of q.take(89)) expect(n).toBe(expected++);
    }
    expect(q.length).toBe(200 * 97 - expected);
    q.clear();
    expect(q.length).toBe(0);
    expect(q.dropped).toBe(200 * 97 - expected);
  });
});

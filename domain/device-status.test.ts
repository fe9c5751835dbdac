import { describe, expect, it } from 'vitest';
import { classifyDeviceStatus } from './device-status.ts';

const now = new Date('2024-05-01T12:00:00Z');
const thresholds = { inactiveAfterMinutes: 30, movingSpeedKmh: 5 };
const ago = (minutes: number) => new Date(now.getTime() - minutes * 60_000);

describe('classifyDeviceStatus', () => {
  it.each([
    ['never reported', { lastReportAt: null, speedKmh: 50, ignition: true }, 'Inactive'],
    ['silent for 30 min exactly', { lastReportAt: ago(30), speedKmh: 0, ignition: false }, 'Off'],
    ['silent for just over 30 min', { lastReportAt: new Date(ago(30).getTime() - 1), speedKmh: 80, ignition: true }, 'Inactive'],
    ['at the moving speed', { lastReportAt: ago(1), speedKmh: 5, ignition: true }, 'Moving'],
    ['moving with ignition unknown', { lastReportAt: ago(1), speedKmh: 30, ignition: null }, 'Moving'],
    ['slower, ignition on', { lastReportAt: ago(1), speedKmh: 4.99, ignition: true }, 'Stopped'],
    ['slower, ignition off', { lastReportAt: ago(1), speedKmh: 0, ignition: false }, 'Off'],
    ['speed and ignition unknown', { lastReportAt: ago(1), speedKmh: null, ignition: null }, 'Off'],
  ] as const)('%s', (_case, inputs, expected) => {
    expect(classifyDeviceStatus(inputs, now, thresholds)).toBe(expected);
  });

  it('follows configured thresholds', () => {
    const strict = { inactiveAfterMinutes: 5, movingSpeedKmh: 20 };
    expect(classifyDeviceStatus({ lastReportAt: ago(6), speedKmh: 50, ignition: true }, now, strict)).toBe('Inactive');
    expect(classifyDeviceStatus({ lastReportAt: ago(1), speedKmh: 15, ignition: true }, now, strict)).toBe('Stopped');
  });
});

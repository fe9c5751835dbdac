import { describe, expect, it } from 'vitest';
import { eventMessage } from './notification-message.ts';

const enter = {
  type: 'vehicle.geofence.enter',
  occurredAt: new Date('2026-11-27T22:15:00Z'),
  data: {
    vehicle: { id: '356307042441013', name: 'Truck <7>', plates: 'ABC-123' },
    position: { lat: 40.4168, lng: -3.7038, speedKmh: 42, heading: 90, fixTime: '2026-11-27T22:15:00.000Z', address: 'Calle Mayor 1, Madrid' },
    geofence: { id: 12, name: 'Airport & cargo' },
  },
};

describe('the message about an event', () => {
  it('says the vehicle, what happened, when in the recipient\'s timezone, where, and links to the vehicle', () => {
    const m = eventMessage(enter, { timezone: 'Europe/Madrid', publicUrl: 'https://fleet.example.com' });
    expect(m.subject).toBe('Truck <7>: entered Airport & cargo');
    expect(m.text).toContain('When: 27/11/2026 23:15 CET');
    expect(m.text).toContain('Where: Calle Mayor 1, Madrid');
    expect(m.text).toContain('Vehicle: Truck <7> (ABC-123)');
    expect(m.url).toBe('https://fleet.example.com/console#/vehicles/356307042441013');
    expect(m.short).toBe('Truck <7>: entered Airport & cargo, 27/11/2026 23:15 CET, Calle Mayor 1, Madrid');
  });

  it('escapes every value in the HTML version', () => {
    const m = eventMessage(enter, { timezone: 'UTC' });
    expect(m.html).toContain('Truck &#60;7&#62;');
    expect(m.html).toContain('Airport &#38; cargo');
    expect(m.html).not.toContain('<7>');
  });

  it('shows coordinates when no address is known, and no link without a public address', () => {
    const data = { ...enter.data, position: { ...enter.data.position, address: null } };
    const m = eventMessage({ ...enter, data }, { timezone: 'America/New_York' });
    expect(m.text).toContain('Where: 40.4168, -3.7038');
    expect(m.text).toContain('When: 27/11/2026 17:15');
    expect(m.url).toBeUndefined();
    expect(m.html).not.toContain('<a ');
  });

  it('names a panic plainly', () => {
    const m = eventMessage({ ...enter, type: 'vehicle.panic', data: { vehicle: enter.data.vehicle, alarm: 'sos' } }, { timezone: 'UTC' });
    expect(m.subject).toBe('Truck <7>: PANIC: the SOS button was pressed');
  });
});

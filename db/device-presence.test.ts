import { describe, expect, it } from 'vitest';
import { presenceEvents, type OpenConnection, type PresenceChange } from './device-presence.ts';

const at = new Date('2024-05-01T12:00:00Z');
const change = (kind: PresenceChange['kind'], connectionId: string, reason?: string): PresenceChange => ({
  kind, deviceId: 7, connectionId, at, protocol: 'gt06', remoteAddress: '203.0.113.7', ...(reason ? { reason } : {}),
});
const stored = (connectionId: string): OpenConnection => ({ connectionId, protocol: 'teltonika', remoteAddress: '198.51.100.1', since: at });

function run(open: OpenConnection | null, changes: PresenceChange[]) {
  const map = new Map([[7, open]]);
  const events = presenceEvents(map, changes).map((e) => `${e.type.slice(7)}:${e.dedupeKey.split(':')[2]}${e.data?.reason ? `:${e.data.reason}` : ''}`);
  return { events, open: map.get(7)?.connectionId ?? null };
}

describe('presenceEvents', () => {
  it.each([
    ['online, then its offline', null, [change('online', 'a'), change('offline', 'a', 'idle timeout')], ['online:a', 'offline:a:idle timeout'], null],
    ['an online over a stored connection closes that one first', stored('old'), [change('online', 'new')], ['offline:old:replaced by a newer connection', 'online:new'], 'new'],
    ['the replaced connection closing later logs nothing', stored('new'), [change('offline', 'old', 'idle timeout')], [], 'new'],
    ['the same connection online twice logs once', stored('a'), [change('online', 'a')], [], 'a'],
    ['an offline with nothing stored logs nothing', null, [change('offline', 'a', 'closed by the tracker')], [], null],
  ] as const)('%s', (_, open, changes, events, after) => {
    expect(run(open, [...changes])).toEqual({ events, open: after });
  });

  it('describes a replaced connection as it was stored', () => {
    const [offline] = presenceEvents(new Map([[7, stored('old')]]), [change('online', 'new')]);
    expect(offline).toMatchObject({ type: 'device.offline', deviceId: 7, occurredAt: at, data: { protocol: 'teltonika', remoteAddress: '198.51.100.1', reason: 'replaced by a newer connection' } });
  });
});

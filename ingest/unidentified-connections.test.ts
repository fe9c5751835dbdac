import { describe, expect, it } from 'vitest';
import { addressKey, UnidentifiedConnections } from './unidentified-connections.ts';

describe('UnidentifiedConnections', () => {
  it('holds at most the maximum per address and frees a place on release', () => {
    const held = new UnidentifiedConnections(2);
    expect(held.take('10.0.0.1')).toBe(true);
    expect(held.take('10.0.0.1')).toBe(true);
    expect(held.take('10.0.0.1')).toBe(false);
    expect(held.take('10.0.0.2')).toBe(true);
    held.release('10.0.0.1');
    expect(held.count('10.0.0.1')).toBe(1);
    expect(held.take('10.0.0.1')).toBe(true);
    held.release('10.0.0.2');
    expect(held.count('10.0.0.2')).toBe(0);
  });

  it('counts an IPv4-mapped address as its IPv4 one and an IPv6 host by its /64', () => {
    const held = new UnidentifiedConnections(2);
    expect(held.take('::ffff:192.0.2.7')).toBe(true);
    expect(held.take('192.0.2.7')).toBe(true);
    expect(held.take('::ffff:192.0.2.7')).toBe(false);
    expect(held.take('2001:db8:1:2::1')).toBe(true);
    expect(held.take('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe(true);
    expect(held.take('2001:0db8:0001:0002:ffff::9')).toBe(false);
    expect(held.take('2001:db8:1:3::1')).toBe(true);
  });
});

describe('addressKey', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['2001:db8:a:b:c:d:e:f', '2001:db8:a:b::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
  ])('%s → %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});

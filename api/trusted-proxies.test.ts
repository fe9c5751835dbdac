import { describe, expect, it } from 'vitest';
import { plainAddress, TrustedProxies, TrustedProxyListError } from './trusted-proxies.ts';

describe('TrustedProxies', () => {
  const proxies = new TrustedProxies(['10.0.0.0/8', '192.168.1.5', 'fd00::/8']);

  it('believes X-Forwarded-For only from a trusted peer', () => {
    expect(proxies.clientOf('203.0.113.7', '198.51.100.1')).toBe('203.0.113.7');
    expect(proxies.clientOf('10.1.2.3', '198.51.100.1')).toBe('198.51.100.1');
    expect(proxies.clientOf('192.168.1.5', undefined)).toBe('192.168.1.5');
    expect(proxies.clientOf('fd12::1', '2001:db8::9')).toBe('2001:db8::9');
  });

  it('takes the nearest untrusted hop, so a client cannot prepend an address of its choosing', () => {
    // The client wrote "1.2.3.4" itself; the proxies appended what they saw.
    expect(proxies.clientOf('10.0.0.1', '1.2.3.4, 198.51.100.1, 10.0.0.2')).toBe('198.51.100.1');
    expect(proxies.clientOf('10.0.0.1', '10.0.0.3, 10.0.0.2')).toBe('10.0.0.3');
    expect(proxies.clientOf('10.0.0.1', 'garbage, 10.0.0.2')).toBe('10.0.0.2');
    expect(proxies.clientOf('10.0.0.1', '[2001:db8::1]:443, 198.51.100.1:5123')).toBe('198.51.100.1');
  });

  it('trusts nobody when empty', () => {
    expect(new TrustedProxies([]).clientOf('10.0.0.1', '198.51.100.1')).toBe('10.0.0.1');
  });

  it('refuses what is not an address or a block', () => {
    for (const bad of ['10.0.0.0/33', 'proxy.local', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x']) {
      expect(() => new TrustedProxies([bad])).toThrow(TrustedProxyListError);
    }
  });

  it('reads addresses as peers and proxies write them', () => {
    expect(plainAddress('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(plainAddress(' 198.51.100.1:8080 ')).toBe('198.51.100.1');
    expect(plainAddress('[::1]:80')).toBe('::1');
    expect(plainAddress('unknown')).toBeNull();
  });
});

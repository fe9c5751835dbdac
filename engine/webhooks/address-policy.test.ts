import { describe, expect, it } from 'vitest';
import { refusedAddressReason } from './address-policy.ts';
import { nextRetryDelay, parseRetryAfter, RETRY_DELAYS_MS } from './retry-schedule.ts';
import { checkWebhookUrl } from './webhook-url.ts';

describe('addresses webhooks may not reach', () => {
  const refused = [
    '127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '100.127.255.254',
    '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fc00::1', 'fd00:ec2::254', 'fe80::1', '::ffff:127.0.0.1', '::ffff:7f00:1',
    '::ffff:10.0.0.1', '::ffff:169.254.169.254',
    // Local-use NAT64 (RFC 8215): a translator of the server's own network turns these into IPv4 addresses.
    '64:ff9b:1::1', '64:ff9b:1:ffff:ffff::a00:1', '64:ff9b:1:0:0:0:7f00:1',
    // 6to4 embeds an IPv4 address (2002:7f00:1:: is 127.0.0.1), and a relay on the way may deliver to it.
    '2002:7f00:1::1', '2002:a9fe:a9fe::1', '2002:808:808::1',
    // IPv4-compatible (::/96, deprecated): the last 32 bits are an IPv4 address.
    '::7f00:1', '::127.0.0.1', '::a00:1', '::169.254.169.254', '::8.8.8.8', '::2',
  ];
  const allowed = [
    '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8',
    // Next to the refused ranges, not in them.
    '64:ff9b:2::1', '2003::1', '2001:4860:4860::8888', '::1:0:0:1',
  ];
  it.each(refused)('refuses %s', (address) => expect(refusedAddressReason(address)).toBeTruthy());
  it.each(allowed)('allows %s', (address) => expect(refusedAddressReason(address)).toBeUndefined());
});

describe('webhook URLs at registration', () => {
  it('refuses other schemes, credentials and hosts resolving to private addresses, saying why', async () => {
    await expect(checkWebhookUrl('ftp://example.com/x', { allowPrivate: false })).rejects.toThrow(/https:\/\/ or http:\/\//);
    await expect(checkWebhookUrl('https://user:pw@example.com/x', { allowPrivate: false })).rejects.toThrow(/user name or password/);
    await expect(checkWebhookUrl('not a url', { allowPrivate: false })).rejects.toThrow(/not a valid URL/);
    await expect(checkWebhookUrl('http://localhost:8080/hook', { allowPrivate: false })).rejects.toThrow(/resolves to (127\.0\.0\.1|::1).*WEBHOOK_ALLOW_PRIVATE/);
    await expect(checkWebhookUrl('http://[::ffff:127.0.0.1]/hook', { allowPrivate: false })).rejects.toThrow(/IPv4-mapped/);
    await expect(checkWebhookUrl('http://169.254.169.254/latest/meta-data', { allowPrivate: false })).rejects.toThrow(/may not reach/);
    await expect(checkWebhookUrl('http://[2002:7f00:1::1]/hook', { allowPrivate: false })).rejects.toThrow(/6to4.*embeds an IPv4 address/);
    await expect(checkWebhookUrl('http://[::127.0.0.1]/hook', { allowPrivate: false })).rejects.toThrow(/IPv4-compatible/);
    await expect(checkWebhookUrl('http://[64:ff9b:1::a00:1]/hook', { allowPrivate: false })).rejects.toThrow(/local-use NAT64/);
    await expect(checkWebhookUrl('http://127.0.0.1:8080/hook', { allowPrivate: true })).resolves.toBeUndefined();
    await expect(checkWebhookUrl('https://93.184.215.14/hook', { allowPrivate: false })).resolves.toBeUndefined();
  });
});

describe('the retry schedule', () => {
  it('follows the Standard Webhooks schedule with ±10 % jitter, then stops', () => {
    expect(RETRY_DELAYS_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    expect(nextRetryDelay(1, RETRY_DELAYS_MS, undefined, () => 0)).toBe(4_500);
    expect(nextRetryDelay(1, RETRY_DELAYS_MS, undefined, () => 1)).toBe(5_500);
    expect(nextRetryDelay(9, RETRY_DELAYS_MS, undefined, () => 0.5)).toBe(86_400_000);
    expect(nextRetryDelay(10, RETRY_DELAYS_MS)).toBeUndefined();
  });

  it('waits out a longer Retry-After, capped at a day', () => {
    expect(nextRetryDelay(1, RETRY_DELAYS_MS, 60_000, () => 0.5)).toBe(60_000);
    expect(nextRetryDelay(2, RETRY_DELAYS_MS, 60_000, () => 0.5)).toBe(300_000);
    expect(nextRetryDelay(1, RETRY_DELAYS_MS, 30 * 86_400_000, () => 0.5)).toBe(86_400_000);
    expect(parseRetryAfter('120')).toBe(120_000);
    expect(parseRetryAfter(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThan(8_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

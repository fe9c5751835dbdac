import { describe, expect, it } from 'vitest';
import { cutProxyHeader, PROXY_HEADER_MAX_BYTES } from './proxy-header.ts';

const SIGNATURE = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');

/** A v2 header: version/command byte, family/transport byte, then the block after the length. */
function v2(versionCommand: number, familyTransport: number, block: Uint8Array): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(block.length);
  return Buffer.concat([SIGNATURE, Buffer.from([versionCommand, familyTransport]), length, block]);
}

/** The INET block: source, destination, source port, destination port. */
function inet(source: number[], destination: number[], sourcePort: number, destinationPort: number): Buffer {
  const block = Buffer.alloc(12);
  block.set(source, 0);
  block.set(destination, 4);
  block.writeUInt16BE(sourcePort, 8);
  block.writeUInt16BE(destinationPort, 10);
  return block;
}

function inet6(source: string, destination: string, sourcePort: number, destinationPort: number): Buffer {
  const block = Buffer.alloc(36);
  Buffer.from(source, 'hex').copy(block, 0);
  Buffer.from(destination, 'hex').copy(block, 16);
  block.writeUInt16BE(sourcePort, 32);
  block.writeUInt16BE(destinationPort, 34);
  return block;
}

/** A TLV: type, 2-byte length, value. */
const tlv = (type: number, value: Buffer) => Buffer.concat([Buffer.from([type, value.length >> 8, value.length & 0xff]), value]);

const line = (text: string) => Buffer.from(text, 'latin1');

const TRACKER_BYTES = Buffer.from('000f333536333037303432343431303133', 'hex');
const PROXY_INET = v2(0x21, 0x11, inet([203, 0, 113, 7], [192, 0, 2, 1], 40000, 5027));

describe('cutProxyHeader, version 2', () => {
  it('reads an IPv4 client and says where the tracker bytes start', () => {
    const cut = cutProxyHeader(Buffer.concat([PROXY_INET, TRACKER_BYTES]));
    expect(cut).toEqual({ kind: 'header', version: 2, consumed: 28, source: { address: '203.0.113.7', port: 40000 } });
  });

  it('reads an IPv6 client in the form Node gives a socket\'s address', () => {
    const header = v2(0x21, 0x21, inet6('20010db8000000000000000000000007', '20010db8000000000000000000000001', 40001, 5027));
    expect(cutProxyHeader(header)).toEqual({ kind: 'header', version: 2, consumed: 52, source: { address: '2001:db8::7', port: 40001 } });
    const mapped = v2(0x21, 0x21, inet6('00000000000000000000ffffcb007107', '00000000000000000000ffffc0000201', 40002, 5027));
    expect(cutProxyHeader(mapped)).toMatchObject({ source: { address: '::ffff:203.0.113.7', port: 40002 } });
  });

  it('skips the TLVs after the addresses', () => {
    const block = Buffer.concat([inet([198, 51, 100, 9], [192, 0, 2, 1], 1234, 5027), tlv(0x01, Buffer.from('h2')), tlv(0x05, Buffer.alloc(20, 7))]);
    const cut = cutProxyHeader(Buffer.concat([v2(0x21, 0x11, block), TRACKER_BYTES]));
    expect(cut).toEqual({ kind: 'header', version: 2, consumed: 16 + block.length, source: { address: '198.51.100.9', port: 1234 } });
  });

  it('names no client for a LOCAL command (a health check), whatever its address block holds', () => {
    expect(cutProxyHeader(v2(0x20, 0x00, Buffer.alloc(0)))).toEqual({ kind: 'header', version: 2, consumed: 16, source: undefined });
    expect(cutProxyHeader(v2(0x20, 0x11, inet([203, 0, 113, 7], [192, 0, 2, 1], 1, 2)))).toEqual({ kind: 'header', version: 2, consumed: 28, source: undefined });
  });

  it('names no client for the AF_UNSPEC and AF_UNIX families', () => {
    expect(cutProxyHeader(v2(0x21, 0x00, Buffer.alloc(0)))).toEqual({ kind: 'header', version: 2, consumed: 16, source: undefined });
    expect(cutProxyHeader(v2(0x21, 0x31, Buffer.alloc(216)))).toEqual({ kind: 'header', version: 2, consumed: 232, source: undefined });
  });

  it('waits for every byte of a header, one byte at a time', () => {
    const header = v2(0x21, 0x11, Buffer.concat([inet([203, 0, 113, 7], [192, 0, 2, 1], 40000, 5027), tlv(0x04, Buffer.alloc(10))]));
    for (let n = 0; n < header.length; n++) expect(cutProxyHeader(header.subarray(0, n))).toEqual({ kind: 'incomplete' });
    expect(cutProxyHeader(header)).toMatchObject({ kind: 'header', consumed: header.length });
  });

  it('reads a header from a view into a larger buffer', () => {
    const backing = Buffer.concat([Buffer.from('junk'), PROXY_INET, TRACKER_BYTES]);
    expect(cutProxyHeader(backing.subarray(4))).toMatchObject({ kind: 'header', consumed: 28, source: { address: '203.0.113.7' } });
  });

  it('refuses a header longer than the limit as soon as its length is read', () => {
    const fixed = v2(0x21, 0x11, Buffer.alloc(PROXY_HEADER_MAX_BYTES)).subarray(0, 16);
    expect(cutProxyHeader(fixed)).toEqual({ kind: 'invalid', reason: `PROXY v2 header of ${PROXY_HEADER_MAX_BYTES + 16} bytes, over the limit of ${PROXY_HEADER_MAX_BYTES}` });
    expect(cutProxyHeader(PROXY_INET, 27)).toMatchObject({ kind: 'invalid' });
    expect(cutProxyHeader(PROXY_INET, 28)).toMatchObject({ kind: 'header' });
  });

  it.each([
    ['another version', v2(0x11, 0x11, inet([1, 2, 3, 4], [5, 6, 7, 8], 1, 2)), 'PROXY v2 header with version 1'],
    ['an unknown command', v2(0x22, 0x11, inet([1, 2, 3, 4], [5, 6, 7, 8], 1, 2)), 'PROXY v2 header with unknown command 2'],
    ['an unknown family', v2(0x21, 0x41, Buffer.alloc(12)), 'PROXY v2 header with unknown address family 4'],
    ['a block too short for its family', v2(0x21, 0x21, Buffer.alloc(12)), 'PROXY v2 address block of 12 bytes, too short for its family'],
    ['a datagram transport', v2(0x21, 0x12, inet([1, 2, 3, 4], [5, 6, 7, 8], 1, 2)), 'PROXY v2 header for transport 2, not a TCP stream'],
  ])('refuses %s', (_name, header, reason) => {
    expect(cutProxyHeader(header)).toEqual({ kind: 'invalid', reason });
  });
});

describe('cutProxyHeader, version 1', () => {
  it('reads a TCP4 and a TCP6 line', () => {
    const tcp4 = line('PROXY TCP4 203.0.113.7 192.0.2.1 40000 5027\r\n');
    expect(cutProxyHeader(Buffer.concat([tcp4, TRACKER_BYTES]))).toEqual({
      kind: 'header', version: 1, consumed: tcp4.length, source: { address: '203.0.113.7', port: 40000 },
    });
    expect(cutProxyHeader(line('PROXY TCP6 2001:DB8:0:0::7 2001:db8::1 40001 5027\r\n'))).toMatchObject({ source: { address: '2001:db8::7', port: 40001 } });
  });

  it('names no client for UNKNOWN', () => {
    const unknown = line('PROXY UNKNOWN ffff:f...f:ffff 65535 65535\r\n');
    expect(cutProxyHeader(Buffer.concat([unknown, TRACKER_BYTES]))).toEqual({ kind: 'header', version: 1, consumed: unknown.length, source: undefined });
  });

  it('waits for the CR LF, up to the 107 bytes a line may have', () => {
    const whole = line('PROXY TCP4 203.0.113.7 192.0.2.1 40000 5027\r\n');
    for (let n = 0; n < whole.length; n++) expect(cutProxyHeader(whole.subarray(0, n))).toEqual({ kind: 'incomplete' });
    expect(cutProxyHeader(line(`PROXY ${'x'.repeat(100)}`))).toEqual({ kind: 'incomplete' });
    expect(cutProxyHeader(line(`PROXY ${'x'.repeat(101)}`))).toEqual({ kind: 'invalid', reason: 'PROXY v1 line without CR LF in its first 107 bytes' });
  });

  it.each([
    'PROXY TCP5 203.0.113.7 192.0.2.1 40000 5027\r\n',
    'PROXY TCP4 203.0.113.7 192.0.2.1 40000\r\n',
    'PROXY TCP4 2001:db8::7 192.0.2.1 40000 5027\r\n',
    'PROXY TCP4 203.0.113.07 192.0.2.1 40000 5027\r\n',
    'PROXY TCP4 203.0.113.7 192.0.2.1 65536 5027\r\n',
    'PROXY TCP4 203.0.113.7 192.0.2.1 040000 5027\r\n',
    'PROXY TCP4  203.0.113.7 192.0.2.1 40000 5027\r\n',
  ])('refuses %j', (text) => {
    expect(cutProxyHeader(line(text))).toMatchObject({ kind: 'invalid' });
  });
});

describe('cutProxyHeader, neither', () => {
  it('refuses at the first byte that is neither signature, so a tracker talking directly is not waited on', () => {
    expect(cutProxyHeader(TRACKER_BYTES)).toEqual({ kind: 'invalid', reason: 'no PROXY protocol signature' });
    expect(cutProxyHeader(line('GET / HTTP/1.1\r\n'))).toMatchObject({ kind: 'invalid' });
    expect(cutProxyHeader(Buffer.concat([SIGNATURE.subarray(0, 5), Buffer.from([0x42])]))).toMatchObject({ kind: 'invalid' });
    expect(cutProxyHeader(line('PROXX'))).toMatchObject({ kind: 'invalid' });
  });

  it('waits on an empty buffer and on a prefix of either signature', () => {
    expect(cutProxyHeader(new Uint8Array(0))).toEqual({ kind: 'incomplete' });
    expect(cutProxyHeader(SIGNATURE.subarray(0, 7))).toEqual({ kind: 'incomplete' });
    expect(cutProxyHeader(line('PROX'))).toEqual({ kind: 'incomplete' });
  });
});

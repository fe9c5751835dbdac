import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import type { Device } from '../db/schema.ts';
import { encodeCodec12 } from '../ingest/protocols/teltonika/teltonika-encoder.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { teltonikaCodec8, teltonikaLogin } from '../simulators/teltonika-packets.ts';
import { eventually } from './support/eventually.ts';
import { freePort, freshDatabase, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { servedApi } from './support/served-api.ts';

/**
 * Photos end to end: `fleet serve` (embedded, or PostgreSQL + Redis when the suite runs there),
 * a Meitrack and a Teltonika tracker on real sockets sending a real JPEG in pieces, and the API over
 * HTTP: the picture downloaded is the tracker's, byte for byte.
 */

/** A 24×16 JPEG drawn on a browser canvas (`toDataURL('image/jpeg', 0.9)`): 1,020 bytes. */
const JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQAAAQABAAD/4gHYSUNDX1BST0ZJTEUAAQEAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAAAABhY3NwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAAABR3dHB0AAABUAAAABRyVFJDAAABZAAAAChnVFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAAAAEAAAAMZW5VUwAAAAgAAAAcAHMAUgBHAEJYWVogAAAAAAAAb6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAAAAAAACSgAAAPhAAAts9YWVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQAAAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAAAABtbHVjAAAAAAAAAAEAAAAMZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAgADIAMAAxADb/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAQABgDASIAAhEBAxEB/8QAFwABAQEBAAAAAAAAAAAAAAAAAAQFB//EACUQAAEDBAEEAgMAAAAAAAAAAAECAwQABQcRIRMiMWFBURIjJP/EABYBAQEBAAAAAAAAAAAAAAAAAAUGB//EACcRAAEBBQcFAQAAAAAAAAAAABIRAAECExUEBQYUMTJBBxYzYWJC/9oADAMBAAIRAxEAPwDRwrhZOTUzJ0+W7DtcZYZ/nA6jrmtkAkEAAEfB81TlnBzWPpVvkw5j0u0y1lnb349VpwJKgCQNEEA/A8GpcMZpGMkS4M2E5NtklwPfpUA40vWiQDwrYA42PFUZWzknIUqBHiwnYdpiOKe06QXXVlJSCQOBoE8bPk1R3w7qH3RaX2NckEYIA+N4p+pkxE9/DB3M/C+UsudSZMgNV0NxLwIKvr6bnV2tLMCMlxtSyorCe4j6Pr1Sl2uzM+MlttKwoLCu4D6Pv3StUwZVqTDWinFFu1ThhcbUirxUQZAw7dF5b//Z',
  'base64',
);

/** The JPEG grown past several 2 KiB pieces by a comment segment (FF FE), still a valid JPEG. */
function withComment(jpeg: Buffer, length: number): Buffer {
  const segment = Buffer.alloc(4 + length, 0x20);
  segment.writeUInt16BE(0xfffe, 0);
  segment.writeUInt16BE(length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), segment, jpeg.subarray(2)]);
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A socket that reads what the server writes, by length or up to a delimiter. */
async function trackerSocket(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = Buffer.alloc(0);
  socket.on('data', (chunk) => (received = Buffer.concat([received, chunk])));
  const waitFor = async (ready: () => number | undefined, what: string, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const n = ready();
      if (n !== undefined) {
        const out = received.subarray(0, n);
        received = received.subarray(n);
        return out;
      }
      if (Date.now() > deadline) throw new Error(`no ${what} from the server within ${timeoutMs} ms (holding ${received.toString('hex')})`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  return {
    send: (bytes: Uint8Array | string) => void socket.write(bytes),
    read: (n: number, what: string) => waitFor(() => (received.length >= n ? n : undefined), what),
    line: async (what: string) => (await waitFor(() => { const i = received.indexOf('\r\n'); return i < 0 ? undefined : i + 2; }, what)).toString('latin1'),
    /** Nothing arrives within `ms`. */
    async silent(ms: number) {
      await new Promise((r) => setTimeout(r, ms));
      return received.length === 0;
    },
    close: () => socket.destroy(),
  };
}

/** A Meitrack frame from the tracker, `$$<flag><length>,<imei>,<content>*<checksum>\r\n`, with binary content allowed. */
function meitrackFrame(imei: string, content: Buffer | string): Buffer {
  const rest = Buffer.concat([Buffer.from(`,${imei},`), Buffer.from(content as never, 'latin1'), Buffer.from('*')]);
  const head = Buffer.from(`$$Q${rest.length + 4}`);
  let sum = 0;
  for (const b of Buffer.concat([head, rest])) sum += b;
  return Buffer.concat([head, rest, Buffer.from(`${(sum & 0xff).toString(16).toUpperCase().padStart(2, '0')}\r\n`)]);
}

/** A Meitrack AAA position report at `time` (yyMMddHHmmss, UTC). */
const meitrackReport = (imei: string, time: string) =>
  meitrackFrame(imei, `AAA,35,19.432600,-99.133200,${time},A,9,20,0.0,90,1,2240,1,0,000|00||,0000,4.33|12.96|1.92|2.72|2.69,0.000000|0|0.000000,`);

const yymmddhhmmss = (d: Date) => d.toISOString().replace(/[-:T]/g, '').slice(2, 14);

let fresh: FreshDatabase;
let server: Serving;
let key: string;
let strangerKey: string;
let meitrackPort: number;
let teltonikaPort: number;
const devices: Record<string, Device> = {};
const open: Array<{ close(): void }> = [];

const api = servedApi(() => server.url, () => key);
const fetchMedia = (path: string, headers: Record<string, string> = {}, as = key) =>
  fetch(`${server.url}/api/v1${path}`, { headers: { Authorization: `Bearer ${as}`, ...headers } });

beforeAll(async () => {
  fresh = await freshDatabase();
  const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.dataDir ?? '', embedded: 'own' });
  const make = fixtures(setup.db);
  const { account, user } = await make.tenant();
  key = (await make.key(user.id, { permissions: ['*', 'commands:write'] })).key;
  devices.meitrack = await make.device(account.id, { userIds: [user.id], protocol: 'meitrack', name: 'Camera van' });
  devices.teltonika = await make.device(account.id, { userIds: [user.id], protocol: 'teltonika', name: 'Camera truck' });
  devices.big = await make.device(account.id, { userIds: [user.id], protocol: 'meitrack', name: 'Big pictures' });
  strangerKey = (await make.tenant()).key;
  await setup.close();
  meitrackPort = await freePort();
  teltonikaPort = await freePort();
  server = await serve({
    ...fresh.env, PORT: '0', DEMO_SEED: 'false', MEITRACK_PORT: String(meitrackPort), TELTONIKA_PORT: String(teltonikaPort),
    COMMAND_ANSWER_TIMEOUT_S: '20', MEDIA_MAX_BYTES: '4096',
  });
}, 180_000);

afterAll(async () => {
  for (const t of open) t.close();
  server?.process.kill('SIGTERM');
  await server?.exited;
  await fresh?.destroy();
});

/** Downloads a picture and checks what it is served with. */
async function download(url: string, contentType: string) {
  const res = await fetchMedia(url.replace(/^\/api\/v1/, ''));
  expect(res.status).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  expect(res.headers.get('content-type')).toBe(contentType);
  expect(res.headers.get('content-length')).toBe(String(bytes.length));
  expect(res.headers.get('etag')).toBe(`"${sha256(bytes)}"`);
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'.*sandbox/);
  expect(res.headers.get('content-disposition')).toMatch(/^inline; filename="[\w.-]+\.jpg"$/);
  return { bytes, etag: res.headers.get('etag')! };
}

describe('a Meitrack take_photo', () => {
  it('is acknowledged with the media id once the whole picture, fetched eight chunks at a time, is stored', async () => {
    const imei = devices.meitrack!.imei;
    const tracker = await trackerSocket(meitrackPort);
    open.push(tracker);
    tracker.send(meitrackReport(imei, yymmddhhmmss(new Date(Date.now() - 5_000))));
    await eventually(() => api(`/devices/${imei}/status`), (r) => expect(r.status).toBe(200));

    const posted = await api('/commands', { method: 'POST', body: { deviceId: imei, type: 'take_photo' } });
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    const commandId = posted.body.data.id as string;
    expect(await tracker.line('take_photo command')).toMatch(new RegExp(`^@@[A-Za-z]\\d+,${imei},D03,1,camera_picture\\.jpg\\*[0-9A-F]{2}\\r\\n$`));

    // D03: the picture is under way. The server asks for its first chunks; the command stays sent.
    tracker.send(meitrackFrame(imei, 'D03,1'));
    expect(await tracker.line('first chunk request')).toMatch(new RegExp(`^@@O\\d+,${imei},D00,camera_picture\\.jpg,0\\*`));
    expect((await api(`/commands/${commandId}`)).body.data).toMatchObject({ status: 'sent', response: null });

    const size = 100;
    const chunks = Array.from({ length: Math.ceil(JPEG.length / size) }, (_, i) => JPEG.subarray(i * size, (i + 1) * size));
    expect(chunks.length).toBeGreaterThan(8);
    for (const [i, data] of chunks.entries()) {
      tracker.send(meitrackFrame(imei, Buffer.concat([Buffer.from(`D00,camera_picture.jpg,${chunks.length},${i},`), data])));
      // After each batch of eight the server asks for the next eight.
      if (i === 7) expect(await tracker.line('next chunks request')).toMatch(new RegExp(`,${imei},D00,camera_picture\\.jpg,8\\*`));
    }

    const done = await eventually(() => api(`/commands/${commandId}`), (r) => expect(r.body.data.status).toBe('acknowledged'));
    const mediaId = /^media (\d+)$/.exec(done.body.data.response)?.[1];
    expect(mediaId).toBeDefined();

    const list = await api(`/media?vehicleId=${imei}`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(list.body.data).toEqual([{
      id: mediaId, vehicleId: imei, takenAt: expect.any(String), receivedAt: expect.any(String), contentType: 'image/jpeg', size: JPEG.length,
      fileName: 'camera_picture.jpg', sha256: sha256(JPEG), protocol: 'meitrack', commandId, url: `/api/v1/media/${mediaId}`,
    }]);
    const { bytes, etag } = await download(list.body.data[0].url, 'image/jpeg');
    expect(sha256(bytes)).toBe(sha256(JPEG));
    expect(bytes.equals(JPEG)).toBe(true);
    expect((await fetchMedia(`/media/${mediaId}`, { 'If-None-Match': etag })).status).toBe(304);

    const events = await api(`/events?types=vehicle.media,command.*&deviceIds=${imei}&order=asc`);
    expect(events.body.data.map((e: any) => e.type)).toEqual(['command.sent', 'vehicle.media', 'command.acknowledged']);
    const media = events.body.data.find((e: any) => e.type === 'vehicle.media');
    expect(media.data).toMatchObject({
      vehicle: { id: imei, name: 'Camera van' },
      media: { id: mediaId, contentType: 'image/jpeg', size: JPEG.length, fileName: 'camera_picture.jpg', url: `/api/v1/media/${mediaId}`, commandId },
      position: { lat: 19.4326, lng: -99.1332 },
    });
    expect(events.body.data.find((e: any) => e.type === 'command.acknowledged').data.command.response).toBe(`media ${mediaId}`);
  });

  it('fails a take_photo whose picture grows past MEDIA_MAX_BYTES, and stores nothing', async () => {
    const imei = devices.big!.imei;
    const tracker = await trackerSocket(meitrackPort);
    open.push(tracker);
    tracker.send(meitrackReport(imei, yymmddhhmmss(new Date(Date.now() - 5_000))));
    const posted = await api('/commands', { method: 'POST', body: { deviceId: imei, type: 'take_photo' } });
    await tracker.line('take_photo command');
    tracker.send(meitrackFrame(imei, 'D03,1'));
    await tracker.line('first chunk request');
    const big = withComment(JPEG, 5000);
    const chunks = Array.from({ length: Math.ceil(big.length / 1000) }, (_, i) => big.subarray(i * 1000, (i + 1) * 1000));
    for (const [i, data] of chunks.entries()) tracker.send(meitrackFrame(imei, Buffer.concat([Buffer.from(`D00,camera_picture.jpg,${chunks.length},${i},`), data])));
    const failed = await eventually(() => api(`/commands/${posted.body.data.id}`), (r) => expect(r.body.data.status).toBe('failed'));
    expect(failed.body.data.error).toMatch(/picture was not kept: .*grew past 4096 bytes/);
    expect((await api(`/media?vehicleId=${imei}`)).body.data).toEqual([]);
  });
});

describe('a Teltonika camera', () => {
  it('announces a picture, is asked for it piece by piece, and the picture downloaded is the one it sent', async () => {
    const imei = devices.teltonika!.imei;
    const tracker = await trackerSocket(teltonikaPort);
    open.push(tracker);
    tracker.send(teltonikaLogin(imei));
    expect((await tracker.read(1, 'login answer'))[0]).toBe(1);
    tracker.send(teltonikaCodec8([{ time: new Date(Date.now() - 5_000), latitude: 40.4168, longitude: -3.7038, speedKmh: 0, heading: 0, satellites: 9, ignition: true }]));
    await tracker.read(4, 'AVL acknowledgement');

    // 3,024 bytes, within this server's MEDIA_MAX_BYTES of 4 KiB: two pieces of at most 2 KiB.
    const picture = withComment(JPEG, 2000);
    const pictureId = 0x1234abcd;
    const announce = Buffer.alloc(5);
    announce[0] = 0x01;
    announce.writeUInt32BE(pictureId, 1);
    tracker.send(encodeCodec12(0x0d, announce));
    const requests: Array<{ offset: number; length: number }> = [];
    for (;;) {
      const frame = await tracker.read(8 + 19 + 4, 'piece request');
      expect([...frame.subarray(8, 11)]).toEqual([0x0c, 0x01, 0x0d]);
      expect(frame.readUInt32BE(16)).toBe(pictureId);
      const offset = frame.readUInt32BE(20);
      const length = frame.readUInt16BE(24);
      requests.push({ offset, length });
      const data = picture.subarray(offset, offset + length);
      const piece = Buffer.alloc(11 + data.length);
      piece[0] = 0x02;
      piece.writeUInt32BE(pictureId, 1);
      piece.writeUInt32BE(offset, 5);
      piece.writeUInt16BE(data.length, 9);
      data.copy(piece, 11);
      tracker.send(encodeCodec12(0x0d, piece));
      if (data.length < length) break;
    }
    expect(requests).toEqual([{ offset: 0, length: 2048 }, { offset: 2048, length: 2048 }]);
    expect(await tracker.silent(200)).toBe(true);

    const list = await eventually(() => api(`/media?vehicleId=${imei}`), (r) => expect(r.body.data).toHaveLength(1));
    const item = list.body.data[0];
    expect(item).toMatchObject({ vehicleId: imei, contentType: 'image/jpeg', size: picture.length, sha256: sha256(picture), protocol: 'teltonika', commandId: null, fileName: 'picture_1234abcd.jpg' });
    const { bytes } = await download(item.url, 'image/jpeg');
    expect(bytes.equals(picture)).toBe(true);

    const events = await api(`/events?types=vehicle.media&deviceIds=${imei}`);
    expect(events.body.data).toHaveLength(1);
    expect(events.body.data[0].data).toMatchObject({ media: { id: item.id, commandId: null, url: item.url }, position: { lat: 40.4168, lng: -3.7038 } });
  });
});

describe('media access', () => {
  it('answers 404 to another account\'s key, for the list and the bytes alike', async () => {
    const [mine] = (await api(`/media?vehicleId=${devices.meitrack!.imei}`)).body.data;
    expect((await fetchMedia(`/media/${mine.id}`, {}, strangerKey)).status).toBe(404);
    expect((await fetchMedia(`/media?vehicleId=${devices.meitrack!.imei}`, {}, strangerKey)).status).toBe(404);
    expect((await api('/media')).status).toBe(400);
    expect((await api('/media/abc')).status).toBe(400);
  });
});

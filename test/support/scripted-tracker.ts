import { connect, type Socket } from 'node:net';
import { teltonikaCodec8, teltonikaLogin, type SimulatedFix } from '../../simulators/teltonika-packets.ts';

/** A Teltonika tracker whose every fix the test chooses; each `report` resolves once it is acknowledged. */
export async function scriptedTracker(port: number, imei: string) {
  const socket: Socket = connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = Buffer.alloc(0);
  socket.on('data', (chunk) => (received = Buffer.concat([received, chunk])));
  const take = async (n: number) => {
    const deadline = Date.now() + 10_000;
    while (received.length < n) {
      if (Date.now() > deadline) throw new Error(`tracker ${imei}: no answer from the server`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const out = received.subarray(0, n);
    received = received.subarray(n);
    return out;
  };
  socket.write(teltonikaLogin(imei));
  if ((await take(1))[0] !== 1) throw new Error(`tracker ${imei} was refused`);
  return {
    async report(fix: Partial<SimulatedFix> & { latitude: number; longitude: number }): Promise<Date> {
      const time = fix.time ?? new Date();
      socket.write(teltonikaCodec8([{ speedKmh: 40, heading: 90, satellites: 9, ignition: true, ...fix, time }]));
      await take(4);
      return time;
    },
    /** Several fixes in one packet; resolves once the server acknowledged all of them. */
    async reportAll(fixes: Array<Partial<SimulatedFix> & { latitude: number; longitude: number; time: Date }>): Promise<void> {
      socket.write(teltonikaCodec8(fixes.map((fix) => ({ speedKmh: 40, heading: 90, satellites: 9, ignition: true, ...fix }))));
      const accepted = (await take(4)).readUInt32BE(0);
      if (accepted !== fixes.length) throw new Error(`tracker ${imei}: ${accepted} of ${fixes.length} records acknowledged`);
    },
    close: () => socket.destroy(),
  };
}

/**
 * A tracker that drives west to east through a circle at `center` (radius under 2 km): a fix
 * before it, at its centre and past it, each acknowledged, so the engine logs one enter and one exit.
 */
export async function driveThrough(port: number, imei: string, center: { lat: number; lng: number }): Promise<void> {
  const tracker = await scriptedTracker(port, imei);
  try {
    for (const offset of [-0.02, 0, 0.02]) await tracker.report({ latitude: center.lat, longitude: center.lng + offset });
  } finally {
    tracker.close();
  }
}

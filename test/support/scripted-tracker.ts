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
    close: () => socket.destroy(),
  };
}

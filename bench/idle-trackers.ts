import { connect, type Socket } from 'node:net';
import { simulatedImei } from '../simulators/simulated-devices.ts';
import { teltonikaLogin } from '../simulators/teltonika-packets.ts';

/**
 * The load side of `bench memory`'s idle connections: argv = port seed. Each line on stdin is a
 * total ("10000"): trackers log in (Teltonika IMEI, answered 0x01) until that many are connected,
 * then stay silent; "ok <n>" goes to stdout. Sources rotate over 127.0.0.1-127.0.0.8 so more
 * connections fit than one address has ephemeral ports.
 */
const [port, seed] = process.argv.slice(2, 4).map(Number) as [number, number];
const sockets: Socket[] = [];

function login(index: number): Promise<Socket> {
  return new Promise((done, fail) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: `127.0.0.${1 + (index % 8)}` });
    socket.once('error', fail);
    socket.once('connect', () => socket.write(teltonikaLogin(simulatedImei(seed, index))));
    socket.once('data', (answer) => {
      if (answer[0] !== 1) return fail(new Error(`tracker ${index} refused (answer ${answer[0]})`));
      socket.removeListener('error', fail);
      socket.on('error', () => undefined);
      done(socket);
    });
  });
}

async function growTo(total: number): Promise<void> {
  const CONCURRENT = 200; // logins in flight, so the server's accept queue never overflows
  while (sockets.length < total) {
    const batch = Array.from({ length: Math.min(CONCURRENT, total - sockets.length) }, (_, i) => login(sockets.length + i));
    sockets.push(...(await Promise.all(batch)));
  }
}

let lines = '';
process.stdin.setEncoding('utf8').on('data', (chunk: string) => {
  lines += chunk;
  let newline;
  while ((newline = lines.indexOf('\n')) >= 0) {
    const total = Number(lines.slice(0, newline));
    lines = lines.slice(newline + 1);
    growTo(total).then(
      () => process.stdout.write(`ok ${sockets.length}\n`),
      (error: Error) => {
        process.stderr.write(`${error.message}\n`);
        process.exit(1);
      },
    );
  }
});
process.stdin.on('end', () => process.exit(0));

import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from './logger.ts';
import { listenAndStayUp } from './listening-server.ts';
import { StartupError } from './startup-error.ts';

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

function echoServer(): Server {
  const server = createServer((socket) => socket.on('data', (d) => socket.write(d)).on('error', () => undefined));
  servers.push(server);
  return server;
}

async function client(port: number): Promise<{ socket: Socket; closed: Promise<void>; echo(text: string): Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise((resolve) => socket.once('connect', resolve));
  return {
    socket,
    closed,
    echo: (text) =>
      new Promise((resolve) => {
        socket.once('data', (d) => resolve(d.toString()));
        socket.write(text);
      }),
  };
}

const within = <T>(promise: Promise<T>, ms: number) => Promise.race([promise.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe('listenAndStayUp', () => {
  it('survives an accept error (EMFILE) after listening: logs it and keeps serving', async () => {
    const lines: string[] = [];
    const server = echoServer();
    const port = await listenAndStayUp(server, {
      host: '127.0.0.1', port: 0, name: 'test trackers', portVariable: 'TEST_PORT', maxConnections: 100, log: createLogger('info', (l) => void lines.push(l)),
    });
    // What the server emits when the process is out of file descriptors; without a listener it throws.
    expect(() => server.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', syscall: 'accept' }))).not.toThrow();
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', msg: 'listener error; still listening', listener: 'test trackers', code: 'EMFILE' });
    expect(await (await client(port)).echo('still here')).toBe('still here');
  });

  it('refuses connections past maxConnections at once, counts them, and serves again once some close', async () => {
    let dropped = 0;
    const lines: string[] = [];
    const server = echoServer();
    const port = await listenAndStayUp(server, {
      host: '127.0.0.1', port: 0, name: 'test trackers', portVariable: 'TEST_PORT', maxConnections: 3, log: createLogger('info', (l) => void lines.push(l)), onDrop: () => dropped++,
    });
    const clients = [];
    for (let i = 0; i < 5; i++) clients.push(await client(port));
    const refused = await Promise.all(clients.map((c) => within(c.closed, 1_000)));
    expect(refused.filter(Boolean)).toHaveLength(2);
    expect(dropped).toBe(2);
    expect(lines.filter((l) => l.includes('maximum connections'))).toHaveLength(1); // one line, not one per refusal
    const kept = clients.filter((_, i) => !refused[i]);
    expect(await kept[0]!.echo('a')).toBe('a');
    kept[1]!.socket.destroy();
    await kept[1]!.closed;
    await new Promise((r) => setTimeout(r, 50));
    expect(await (await client(port)).echo('b')).toBe('b');
  });

  it('fails a start on a taken port with one line naming the variable to change', async () => {
    const first = echoServer();
    const port = await listenAndStayUp(first, { host: '127.0.0.1', port: 0, name: 'HTTP API', portVariable: 'PORT', maxConnections: 10, log: createLogger('silent') });
    const second = createServer();
    await expect(listenAndStayUp(second, { host: '127.0.0.1', port, name: 'HTTP API', portVariable: 'PORT', maxConnections: 10, log: createLogger('silent') })).rejects.toThrow(
      new StartupError(`port ${port} on 127.0.0.1 is already in use (HTTP API); set PORT to a free port`),
    );
  });
});

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A message as it arrived: when, and what it said (an email's text part, an SMS's text). */
export interface Arrival {
  at: number;
  text: string;
}

export interface NotificationReceiver {
  /** SMTP_URL for the mail receiver; SMS_URL (a GET template) for the SMS one. */
  url: string;
  /** Every message received so far, parsed (mail is parsed here, after the timing, not while it arrives). */
  arrivals(): Promise<Arrival[]>;
  count(): number;
  close(): Promise<void>;
}

/**
 * A mail server on a loopback port that takes every message and keeps its raw bytes with the time
 * its DATA ended: parsing waits until the run is over, so the receiver costs the machine little while
 * it is measured.
 */
export async function startMailReceiver(): Promise<NotificationReceiver> {
  const raw: Array<{ at: number; bytes: Buffer }> = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        raw.push({ at: Date.now(), bytes: Buffer.concat(chunks) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = (server as unknown as { server: { address(): AddressInfo } }).server.address();
  return {
    url: `smtp://127.0.0.1:${port}`,
    async arrivals() {
      const parsed: Arrival[] = [];
      for (const { at, bytes } of raw) parsed.push({ at, text: normalised((await simpleParser(bytes)).text ?? '') });
      return parsed;
    },
    count: () => raw.length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An SMS gateway on a loopback port: `GET /send?to=…&text=…` answered 200, the text kept with its arrival time. */
export async function startSmsReceiver(): Promise<NotificationReceiver> {
  const received: Arrival[] = [];
  const server = createServer((req, res) => {
    const at = Date.now();
    const text = new URL(req.url ?? '/', 'http://localhost').searchParams.get('text') ?? '';
    req.resume();
    req.on('end', () => {
      received.push({ at, text: normalised(text) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"queued"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/send?to={phone}&text={message}`,
    arrivals: async () => received,
    count: () => received.length,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** Line ends and the trailing newline as mail transport leaves them do not count. */
export function normalised(text: string): string {
  return text.replace(/\r\n/g, '\n').trim();
}

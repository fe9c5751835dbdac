import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
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
  close(): Promise<void>;
}

export interface ReceiverProcess {
  /** SMTP_URL and SMS_URL. */
  urls: { email: string; sms: string };
  /** What each receiver had; the process then exits. */
  collect(): Promise<{ email: Arrival[]; sms: Arrival[] }>;
  /** Ends the process if it still runs. */
  close(): void;
}

/** Both receivers in a process of their own (notification-receiver-process.ts). */
export async function startReceiverProcess(): Promise<ReceiverProcess> {
  const child = fork(resolve(import.meta.dirname, 'notification-receiver-process.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const urls = await new Promise<{ email: string; sms: string }>((ready, fail) => {
    child.once('message', (m) => ready((m as { ready: { email: string; sms: string } }).ready));
    void exited.then(() => fail(new Error('the notification receivers exited before they were ready')));
  });
  return {
    urls,
    collect: () => new Promise((done, fail) => {
      child.once('message', (m) => done((m as { arrivals: { email: Arrival[]; sms: Arrival[] } }).arrivals));
      void exited.then(() => fail(new Error('the notification receivers exited before they answered')));
      child.send('collect');
    }),
    close: () => {
      if (child.exitCode === null) child.kill();
    },
  };
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

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

/** One message the server accepted: the SMTP envelope, whether it came over TLS, and the parsed mail. */
export interface ReceivedMail {
  from: string;
  to: string[];
  /** The session was TLS when DATA was sent (STARTTLS or implicit). */
  secure: boolean;
  /** The user the client logged in as, if it did. */
  user?: string;
  mail: ParsedMail;
}

export interface SmtpTestServer {
  /** smtp://127.0.0.1:<port> (with the user and password when the server asks for a login). */
  url: string;
  /** The self-signed certificate the server offers with STARTTLS: the client's `tls.ca`. */
  certificate?: string;
  received: ReceivedMail[];
  /** The next `count` messages are refused at RCPT TO with this reply code (451: try later; 550: no such mailbox). */
  refuseNext(code: number, count?: number): void;
  close(): Promise<void>;
}

export interface SelfSignedCertificate {
  key: string;
  cert: string;
}

/**
 * A certificate for 127.0.0.1 made with the openssl command line, or undefined when openssl is not
 * installed (the TLS cases then skip). Made into a temporary directory that is removed at once.
 */
export function selfSignedCertificate(): SelfSignedCertificate | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-smtp-tls-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A mail server on a free loopback port that keeps what it is sent. With `tls` it offers STARTTLS
 * with that certificate (or, with `implicitTls`, speaks TLS from the first byte, as on port 465);
 * with `login` it asks for that user and password (over TLS only).
 */
export async function startSmtpTestServer(
  options: { tls?: SelfSignedCertificate; implicitTls?: boolean; login?: { user: string; pass: string } } = {},
): Promise<SmtpTestServer> {
  const received: ReceivedMail[] = [];
  const refusals: number[] = [];
  const server = new SMTPServer({
    secure: Boolean(options.tls && options.implicitTls),
    // Without a certificate of ours STARTTLS is off altogether (smtp-server would otherwise answer it with a built-in one).
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    authOptional: !options.login,
    disabledCommands: [...(options.tls ? [] : ['STARTTLS']), ...(options.login ? [] : ['AUTH'])],
    logger: false,
    onAuth(auth, _session, callback) {
      const { user, pass } = options.login ?? {};
      if (auth.username === user && auth.password === pass) callback(null, { user });
      else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(_address, _session, callback) {
      const code = refusals.shift();
      if (code === undefined) return callback();
      const text = code >= 500 ? 'Mailbox unavailable: no such user' : 'Temporary local problem, try again later';
      callback(Object.assign(new Error(text), { responseCode: code }));
    },
    onData(stream, session: SMTPServerSession, callback) {
      simpleParser(stream).then(
        (mail) => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            secure: session.secure,
            ...(session.user !== undefined ? { user: String(session.user) } : {}),
            mail,
          });
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = (server as unknown as { server: { address(): AddressInfo } }).server.address();
  const credentials = options.login ? `${encodeURIComponent(options.login.user)}:${encodeURIComponent(options.login.pass)}@` : '';
  return {
    url: `${options.tls && options.implicitTls ? 'smtps' : 'smtp'}://${credentials}127.0.0.1:${port}`,
    ...(options.tls ? { certificate: options.tls.cert } : {}),
    received,
    refuseNext(code, count = 1) {
      for (let i = 0; i < count; i++) refusals.push(code);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

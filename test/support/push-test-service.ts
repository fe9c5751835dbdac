import { createECDH, createPublicKey, randomBytes, randomUUID, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

// http_ece ships no types: the one function used here, typed.
const ece = createRequire(import.meta.url)('http_ece') as {
  decrypt(body: Buffer, params: { version: 'aes128gcm'; privateKey: ReturnType<typeof createECDH>; authSecret: string }): Buffer;
};

/** A browser's PushSubscription as JSON: what a page posts to the server. */
export interface TestSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** One push message the service accepted, decrypted as the browser would. */
export interface ReceivedPush {
  endpoint: string;
  payload: string;
  ttl: number;
  urgency: string | undefined;
  /** The VAPID JWT's claims, checked. */
  claims: { aud: string; exp: number; sub: string };
  vapidKey: string;
}

export interface PushTestService {
  origin: string;
  received: ReceivedPush[];
  /** Requests refused, with the status and why: a test can see what the service objected to. */
  refused: Array<{ endpoint: string; status: number; reason: string }>;
  /**
   * A new subscription, keys made as a browser makes them (P-256 key pair, 16 random auth bytes).
   * With `applicationServerKey`, the service accepts only pushes signed with that VAPID key, as browsers bind them.
   */
  subscription(options?: { applicationServerKey?: string; path?: string }): TestSubscription;
  /** The browser dropped the subscription: pushes to it are answered 410 Gone from now on. */
  unsubscribe(endpoint: string): void;
  /** The next `count` pushes are answered `status` (429, 503, ...) with these headers. */
  answerNext(status: number, count?: number, headers?: Record<string, string>): void;
  close(): Promise<void>;
}

interface Subscriber {
  ecdh: ReturnType<typeof createECDH>;
  auth: string;
  applicationServerKey?: string;
  gone: boolean;
}

const MAX_JWT_LIFE_S = 24 * 3600;

/**
 * An HTTP server playing a browser vendor's push service (RFC 8030): it checks the VAPID
 * `Authorization: vapid t=<JWT>, k=<public key>` header (RFC 8292: an ES256 signature by k, aud the
 * endpoint's origin, exp at most 24 hours ahead, a sub) and decrypts the aes128gcm body (RFC 8291)
 * with the subscriber's private key and auth secret, as the browser would.
 */
export async function startPushTestService(): Promise<PushTestService> {
  const subscribers = new Map<string, Subscriber>();
  const received: ReceivedPush[] = [];
  const refused: PushTestService['refused'] = [];
  const scripted: Array<{ status: number; headers: Record<string, string> }> = [];
  let origin = '';

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });

  function refuse(res: ServerResponse, endpoint: string, status: number, reason: string): void {
    refused.push({ endpoint, status, reason });
    res.writeHead(status, { 'content-type': 'text/plain' }).end(reason);
  }

  function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const endpoint = `${origin}${req.url ?? ''}`;
    const subscriber = subscribers.get(req.url ?? '');
    if (req.method !== 'POST') return refuse(res, endpoint, 405, 'push messages are POSTed');
    if (!subscriber) return refuse(res, endpoint, 404, 'no such subscription');
    if (subscriber.gone) return refuse(res, endpoint, 410, 'push subscription has unsubscribed or expired');
    const next = scripted.shift();
    if (next) {
      refused.push({ endpoint, status: next.status, reason: 'scripted' });
      res.writeHead(next.status, next.headers).end();
      return;
    }
    const vapid = checkVapid(req.headers.authorization, origin, subscriber.applicationServerKey);
    if ('reason' in vapid) return refuse(res, endpoint, vapid.status, vapid.reason);
    const ttl = Number(req.headers.ttl);
    if (!Number.isInteger(ttl) || ttl < 0) return refuse(res, endpoint, 400, 'TTL header missing or invalid');
    if (req.headers['content-encoding'] !== 'aes128gcm') return refuse(res, endpoint, 415, `content-encoding must be aes128gcm, got ${req.headers['content-encoding']}`);
    let payload: string;
    try {
      payload = ece.decrypt(body, { version: 'aes128gcm', privateKey: subscriber.ecdh, authSecret: subscriber.auth }).toString('utf8');
    } catch (error) {
      return refuse(res, endpoint, 400, `payload does not decrypt: ${(error as Error).message}`);
    }
    const urgency = req.headers.urgency;
    received.push({ endpoint, payload, ttl, urgency: typeof urgency === 'string' ? urgency : undefined, claims: vapid.claims, vapidKey: vapid.key });
    res.writeHead(201, { location: `${endpoint}/messages/${randomUUID()}` }).end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    received,
    refused,
    subscription(options = {}) {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const auth = randomBytes(16).toString('base64url');
      const path = options.path ?? `/push/${randomUUID()}`;
      subscribers.set(path, { ecdh, auth, gone: false, ...(options.applicationServerKey ? { applicationServerKey: options.applicationServerKey } : {}) });
      return { endpoint: `${origin}${path}`, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth } };
    },
    unsubscribe(endpoint) {
      const subscriber = subscribers.get(new URL(endpoint).pathname);
      if (subscriber) subscriber.gone = true;
    },
    answerNext(status, count = 1, headers = {}) {
      for (let i = 0; i < count; i++) scripted.push({ status, headers });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

type VapidCheck = { claims: ReceivedPush['claims']; key: string } | { status: number; reason: string };

/** RFC 8292: `vapid t=<JWT>, k=<key>`; the JWT ES256-signed by k, for this origin, not expired and not too far ahead, with a sub. */
function checkVapid(header: string | undefined, origin: string, boundKey: string | undefined): VapidCheck {
  const match = /^vapid\s+(.+)$/i.exec(header ?? '');
  if (!match) return { status: 401, reason: 'missing vapid Authorization' };
  const params = Object.fromEntries(match[1]!.split(',').map((part) => part.trim().split('=') as [string, string]));
  const { t: token, k: key } = params;
  if (!token || !key) return { status: 401, reason: 'vapid Authorization needs t= and k=' };
  if (boundKey && key !== boundKey) return { status: 403, reason: 'vapid key is not the subscription\'s applicationServerKey' };
  const raw = Buffer.from(key, 'base64url');
  if (raw.length !== 65 || raw[0] !== 4) return { status: 401, reason: 'k is not an uncompressed P-256 public key' };
  const publicKey = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: raw.subarray(1, 33).toString('base64url'), y: raw.subarray(33).toString('base64url') },
    format: 'jwk',
  });
  const parts = token.split('.');
  if (parts.length !== 3) return { status: 401, reason: 't is not a JWT' };
  const [head, body, signature] = parts as [string, string, string];
  const header_ = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { alg?: string; typ?: string };
  if (header_.alg !== 'ES256') return { status: 401, reason: `JWT alg must be ES256, got ${header_.alg}` };
  const signed = verify('sha256', Buffer.from(`${head}.${body}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  if (!signed) return { status: 401, reason: 'JWT signature does not verify with k' };
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { aud?: string; exp?: number; sub?: string };
  if (claims.aud !== origin) return { status: 401, reason: `JWT aud must be ${origin}, got ${claims.aud}` };
  const now = Math.floor(Date.now() / 1000);
  if (typeof claims.exp !== 'number' || claims.exp <= now) return { status: 401, reason: 'JWT expired or without exp' };
  if (claims.exp > now + MAX_JWT_LIFE_S) return { status: 401, reason: 'JWT exp more than 24 hours ahead' };
  if (!claims.sub) return { status: 401, reason: 'JWT without sub' };
  return { claims: { aud: claims.aud, exp: claims.exp, sub: claims.sub }, key };
}

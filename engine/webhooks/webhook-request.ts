import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveWebhookTarget, WebhookUrlError, type ResolvedTarget } from './webhook-url.ts';

export interface WebhookAnswer {
  /** The receiver's HTTP status; undefined when there was none (refused, timed out, unsafe address). */
  status?: number;
  /** What went wrong, for the delivery log: a network error, a timeout, a refused address, or the start of a non-2xx body. */
  error?: string;
  durationMs: number;
  retryAfter?: string;
}

const BODY_CAP = 4096;

/**
 * Connections are kept open between deliveries to the same host and port, as a browser does: a
 * receiver then costs one request per event, not a connect (and a TLS handshake) each, which is most
 * of a distant receiver's answer time. A kept connection was made to a checked address, so reusing it
 * cannot reach another; an idle one closes after 5 s, or a second before the receiver's own
 * `Keep-Alive: timeout` hint (Node's agent reads it).
 */
const KEEP_ALIVE = { keepAlive: true, scheduling: 'lifo', timeout: 5_000 } as const;
const agents = { 'http:': new HttpAgent(KEEP_ALIVE), 'https:': new HttpsAgent(KEEP_ALIVE) };

/**
 * POSTs one webhook body. The host is resolved and every address checked first, and the connection
 * goes to a checked address only (the socket's lookup is pinned), so DNS cannot change between the
 * check and the connect; TLS still verifies the host name. Redirects are not followed (Node's client
 * never does); the response body is read up to a small cap and the rest discarded.
 */
export async function postWebhook(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; allowPrivate: boolean },
): Promise<WebhookAnswer> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let target: ResolvedTarget;
  try {
    target = await withinTimeout(resolveWebhookTarget(rawUrl, options), options.timeoutMs);
  } catch (error) {
    if (error instanceof WebhookUrlError) return { error: error.message, durationMs: elapsed() };
    throw error;
  }
  // The socket's lookup answers with the checked addresses only: all of them when Node tries
  // several (happy eyeballs, so a host with a dead IPv6 address still gets through), else the first.
  const checked = target.addresses;
  const lookup: LookupFunction = (_host, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) (callback as (e: null, a: ResolvedTarget['addresses']) => void)(null, checked);
    else callback(null, checked[0]!.address, checked[0]!.family);
  };
  const secure = target.url.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  const agent = secure ? agents['https:'] : agents['http:'];
  return new Promise<WebhookAnswer>((resolve) => {
    let settled = false;
    let req: ClientRequest;
    const finish = (answer: Omit<WebhookAnswer, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...answer, durationMs: elapsed() });
    };
    // One budget for the lookup and the request: the claim on the delivery is sized to it.
    const timer = setTimeout(() => {
      finish({ error: `timed out after ${options.timeoutMs} ms` });
      req.destroy();
    }, Math.max(0, options.timeoutMs - elapsed()));
    const attempt = (retried: boolean) => {
      req = send(target.url, {
        method: 'POST',
        agent,
        lookup,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'fleetcore-webhooks/1' },
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        // A kept connection the receiver closed as this request went out: sent again once on a new one,
        // as it would have been had the connection not been kept (not an attempt of the delivery's).
        if (!retried && req.reusedSocket && !settled && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) return attempt(true);
        finish({ error: error.code ? `${error.code}: ${error.message}` : error.message });
      });
      req.on('response', (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const retryAfter = res.headers['retry-after'];
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < BODY_CAP) chunks.push(chunk.subarray(0, BODY_CAP - size));
          size += chunk.length;
          // Past the cap the rest is not read: the connection goes, not back to the pool.
          if (size >= BODY_CAP) res.destroy();
        });
        const done = () => {
          const ok = status >= 200 && status < 300;
          const text = Buffer.concat(chunks).toString('utf8');
          const redirect = status >= 300 && status < 400 ? `redirect to ${res.headers.location ?? '(no location)'} not followed` : undefined;
          finish({ status, retryAfter, error: ok ? undefined : redirect ?? (text ? `HTTP ${status}: ${text.slice(0, 500)}` : `HTTP ${status}`) });
        };
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      });
      req.end(body);
    };
    attempt(false);
  });
}

/**
 * A resolver that hangs (the system's lookup retries for tens of seconds) counts against the
 * request's timeout: the lookup cannot be cancelled, but the delivery stops waiting for it.
 */
function withinTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WebhookUrlError(`timed out after ${timeoutMs} ms resolving the url's host`)), timeoutMs);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import webPush from 'web-push';
import type { Logger } from '../../../runtime/logger.ts';
import { resolveWebhookTarget, WebhookUrlError, type ResolvedTarget } from '../../webhooks/webhook-url.ts';
import type { PushSettings } from '../notification-config.ts';
import type { ChannelAddress, ChannelResult, ChannelSender } from './channel.ts';
import { excerpt, retryAfterMs } from './http-attempt.ts';

/** A push service keeps an undelivered message this long (the browser may be off overnight), then drops it. */
const TTL_S = 24 * 3600;
/** Push services take about 4 KB of payload; the body is cut well before. */
const MAX_BODY_CHARS = 1000;
const BODY_CAP = 4096;

interface PushAnswer {
  status?: number;
  error?: string;
  body?: string;
  retryAfter?: string;
}

/**
 * Web push (RFC 8030) with VAPID (RFC 8292) and an aes128gcm-encrypted payload (RFC 8291), built by
 * the `web-push` package. The endpoint is an address a browser gave a user, so it is checked as a
 * webhook URL is (https only, no private or loopback address, unless WEBHOOK_ALLOW_PRIVATE) and the
 * request goes to the checked address only, so DNS cannot change in between.
 */
export function createWebPushChannel(settings: PushSettings, options: { timeoutMs: number; log: Logger }): ChannelSender {
  const vapidDetails = { subject: settings.subject, publicKey: settings.publicKey, privateKey: settings.privateKey };
  return {
    channel: 'push',
    async send(address: ChannelAddress, message): Promise<ChannelResult> {
      const subscription = address.push;
      if (!subscription) return { outcome: 'failed', error: 'no push subscription' };
      const started = Date.now();
      let target: ResolvedTarget;
      try {
        if (!settings.allowPrivate && !subscription.endpoint.startsWith('https://')) {
          throw new WebhookUrlError('push endpoint must be https:// (set WEBHOOK_ALLOW_PRIVATE=true to allow http://)');
        }
        target = await withinTimeout(resolveWebhookTarget(subscription.endpoint, { allowPrivate: settings.allowPrivate }), options.timeoutMs);
      } catch (error) {
        if (!(error instanceof WebhookUrlError)) throw error;
        const reason = error.message.replace(/^url/, 'push endpoint');
        // A host that does not resolve may again; a refused address stays refused while the setting stays.
        return /does not resolve/.test(reason) ? { outcome: 'retry', error: reason } : { outcome: 'failed', error: reason };
      }
      const payload = JSON.stringify({ title: message.subject, body: cut(message.short), url: message.url });
      let details: ReturnType<typeof webPush.generateRequestDetails>;
      try {
        details = webPush.generateRequestDetails(
          { endpoint: subscription.endpoint, keys: { p256dh: subscription.p256dh, auth: subscription.auth } },
          payload,
          { vapidDetails, TTL: TTL_S, urgency: 'high', contentEncoding: 'aes128gcm' },
        );
      } catch (error) {
        // The browser's keys do not make a P-256 key and a secret: encryption can never succeed.
        return { outcome: 'failed', error: `push subscription keys are invalid: ${(error as Error).message}`, gone: true };
      }
      const answer = await post(target, details.headers, details.body as Buffer, Math.max(1, options.timeoutMs - (Date.now() - started)));
      if (answer.status === undefined) return { outcome: 'retry', error: `push service: ${answer.error}` };
      const { status } = answer;
      if (status >= 200 && status < 300) return { outcome: 'sent' };
      const error = `push service answered ${status}${answer.body ? `: ${excerpt(answer.body)}` : ''}`;
      if (status === 404 || status === 410) return { outcome: 'failed', error, gone: true };
      if (status === 429 || status >= 500) {
        const wait = retryAfterMs(answer.retryAfter);
        return wait === undefined ? { outcome: 'retry', error } : { outcome: 'retry', error, retryAfterMs: wait };
      }
      // 401/403: the push service refused our VAPID signature; 413: the payload; 400: the request.
      if (status === 401 || status === 403) options.log.warn('a push service refused the VAPID signature', { status, host: target.url.host });
      return { outcome: 'failed', error };
    },
    async close() {},
  };
}

/** The endpoint's DNS lookup counts against the attempt's budget too; running out is worth a retry. */
function withinTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WebhookUrlError(`url host does not resolve within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

function cut(text: string): string {
  return text.length > MAX_BODY_CHARS ? `${text.slice(0, MAX_BODY_CHARS - 1)}…` : text;
}

function post(target: ResolvedTarget, headers: OutgoingHttpHeaders, body: Buffer, timeoutMs: number): Promise<PushAnswer> {
  const checked = target.addresses;
  const lookup: LookupFunction = (_host, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all) (callback as (e: null, a: ResolvedTarget['addresses']) => void)(null, checked);
    else callback(null, checked[0]!.address, checked[0]!.family);
  };
  const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: PushAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const req = send(target.url, { method: 'POST', lookup, headers: { ...headers, 'user-agent': 'fleetcore-notifications/1' } }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < BODY_CAP) chunks.push(chunk);
        size += chunk.length;
      });
      res.on('end', () => {
        const retryAfter = res.headers['retry-after'];
        finish({ status: res.statusCode, body: Buffer.concat(chunks).subarray(0, BODY_CAP).toString('utf8'), ...(retryAfter ? { retryAfter } : {}) });
      });
      res.on('error', (error) => finish({ error: error.message }));
    });
    const timer = setTimeout(() => {
      finish({ error: `timed out after ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => finish({ error: error.code ? `${error.code}: ${error.message}` : error.message }));
    req.end(body);
  });
}

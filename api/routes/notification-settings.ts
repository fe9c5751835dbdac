import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { isIP } from 'node:net';
import { inTransaction } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/unique-violation.ts';
import { changeOwnChannels, deletePushSubscription, ownChannels, pushSubscriptionsOf, savePushSubscription } from '../../db/notification-settings.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { refusedAddressReason } from '../../engine/webhooks/address-policy.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requireLiveMode } from '../auth/require-live-mode.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import type { NotificationServer, RouteDeps } from '../route-deps.ts';
import { OwnChannelsSchema, ownChannelsView } from '../views/notification-view.ts';

/** Browsers one user may subscribe for web push. */
export const PUSH_SUBSCRIPTIONS_PER_USER = 20;
const MAX_ENDPOINT_LENGTH = 2048;
const MAX_SERIAL_ID = 2_147_483_647;
const TAG = ['Notifications'];
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const noNul = (s: string) => !s.includes('\u0000');
/** Blank clears an address, as null does. */
const blankToNull = (s: string | null | undefined) => (s === undefined ? undefined : s === null || s === '' ? null : s);
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

const id = z.coerce.number().int().min(1).max(MAX_SERIAL_ID).openapi({ param: { name: 'id', in: 'path' }, example: 5 });

const ChannelsBody = z.object({
  email: z.string().trim().max(254)
    .refine((s) => s === '' || /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s), 'email must be an email address such as ana@example.com')
    .nullable().optional().openapi({ description: 'An address for notifications other than the sign-in email; null or empty: the sign-in email', example: 'ana.alerts@example.com' }),
  telegramChatId: z.string().trim().max(64)
    .refine((s) => s === '' || /^-?\d{1,20}$/.test(s) || /^@[A-Za-z][A-Za-z0-9_]{3,31}$/.test(s), 'telegramChatId must be a numeric chat id (negative for a group) or a public @channel name')
    .nullable().optional().openapi({ description: 'The chat the bot writes to: the numeric id the bot sees (negative for a group) or a public @channel; the user writes to the bot first. null or empty: none', example: '123456789' }),
  phone: z.string().trim().max(16)
    .refine((s) => s === '' || /^\+\d{8,15}$/.test(s), 'phone must be an E.164 number: + and 8 to 15 digits, such as +5215512345678')
    .nullable().optional().openapi({ description: 'E.164 number for SMS; null or empty: none', example: '+5215512345678' }),
  muted: z.boolean().optional().openapi({ description: 'true: nothing is sent to the user on any channel until set false' }),
  mutedUntil: z.string().max(40).refine((s) => ISO_INSTANT.test(s) && !Number.isNaN(Date.parse(s)), 'mutedUntil must be an ISO 8601 date and time with its offset, such as 2026-05-01T08:00:00Z')
    .nullable().optional().openapi({ description: 'Nothing is sent until then (ISO 8601); null: no such pause', example: '2026-05-01T08:00:00Z' }),
}).strict().openapi('NotificationChannelsUpdate');

const SubscriptionBody = z.object({
  endpoint: z.string().max(MAX_ENDPOINT_LENGTH).refine(noNul, 'endpoint must not contain NUL characters')
    .openapi({ description: `The push service's URL for the browser (https://, at most ${MAX_ENDPOINT_LENGTH} characters)`, example: 'https://fcm.googleapis.com/fcm/send/dAbc…' }),
  expirationTime: z.number().nullable().optional().openapi({ description: 'As the browser gives it; not used' }),
  keys: z.object({
    p256dh: z.string().max(200).openapi({ description: 'The browser\'s P-256 public key, base64url (65 bytes)', example: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM' }),
    auth: z.string().max(100).openapi({ description: 'The browser\'s authentication secret, base64url (16 bytes)', example: 'tBHItJI5svbpez7KI4CCXg' }),
  }),
}).openapi('PushSubscriptionCreate', { description: 'A browser\'s PushSubscription as its toJSON() gives it' });

/** The answers of the own-settings reads: any valid credential may call them, so no 403. */
function selfErrorResponses(...extra: Array<[number, string]>) {
  const responses = errorResponses(...extra);
  delete responses[403];
  return responses;
}

const LIVE_ONLY = requireLiveMode('Notification addresses are the user\'s, in both modes: a test-mode key or token cannot change them; use a live key');
const ANY_CREDENTIAL = 'Any valid credential may read its own user\'s; no permission needed.';
const LIVE_CREDENTIAL = 'Any valid live-mode credential may change its own user\'s (a test-mode one answers 403); no permission needed.';

const routes = {
  get: createRoute({
    method: 'get', path: '/users/me/notification-channels', tags: TAG, summary: 'My notification addresses, browsers, mute, and the channels the server sends on',
    description: ANY_CREDENTIAL,
    responses: { 200: { description: 'The user\'s channels', content: json(envelopeSchema(OwnChannelsSchema, 'NotificationChannelsResponse')) }, ...selfErrorResponses() },
  }),
  patch: createRoute({
    method: 'patch', path: '/users/me/notification-channels', tags: TAG, summary: 'Change my notification addresses or mute',
    description: `Only the fields given change. ${LIVE_CREDENTIAL}`,
    middleware: [LIVE_ONLY] as const,
    request: { body: { content: json(ChannelsBody), required: true } },
    responses: {
      200: { description: 'The user\'s channels', content: json(envelopeSchema(OwnChannelsSchema, 'NotificationChannelsUpdated')) },
      ...errorResponses([400, 'Invalid field: an email that is not one, a phone that is not E.164, a Telegram chat that is neither a number nor an @name, a mutedUntil that is not ISO 8601'],
        [403, 'A test-mode credential'], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  subscribe: createRoute({
    method: 'post', path: '/users/me/push-subscriptions', tags: TAG, summary: 'Subscribe this browser to web push',
    description: `The browser's PushSubscription (pushManager.subscribe with the applicationServerKey of GET /users/me/notification-channels). The same endpoint again is the same browser: its keys are replaced, and if another user had subscribed it, it is theirs no more. At most ${PUSH_SUBSCRIPTIONS_PER_USER} browsers per user. ${LIVE_CREDENTIAL}`,
    middleware: [LIVE_ONLY] as const,
    request: { body: { content: json(SubscriptionBody), required: true } },
    responses: {
      201: { description: 'Subscribed', content: json(envelopeSchema(z.object({ id: z.number().int().openapi({ example: 5 }) }), 'PushSubscriptionCreated')) },
      ...errorResponses([400, 'An endpoint that is not https://, or keys that are not base64url of a P-256 key (65 bytes) and a 16-byte secret'], [403, 'A test-mode credential'],
        [409, `The user has ${PUSH_SUBSCRIPTIONS_PER_USER} browsers subscribed; delete one first`], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  unsubscribe: createRoute({
    method: 'delete', path: '/users/me/push-subscriptions/{id}', tags: TAG, summary: 'Unsubscribe one of my browsers',
    description: LIVE_CREDENTIAL,
    middleware: [LIVE_ONLY] as const,
    request: { params: z.object({ id }) },
    responses: { 204: { description: 'Unsubscribed' }, ...errorResponses([400, 'Invalid id'], [403, 'A test-mode credential'], [404, 'No such browser of the user']) },
  }),
};

/** base64url of exactly `bytes` bytes, or undefined. */
function decodedLength(value: string): number | undefined {
  return BASE64URL.test(value) ? Buffer.from(value, 'base64url').length : undefined;
}

/** The push service's URL: https (http only where private endpoints are allowed), a host, no credentials, not a private address. */
function checkedEndpoint(raw: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DomainError('invalid', 'endpoint is not a URL');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) throw new DomainError('invalid', `endpoint must be https://, not ${url.protocol}//`);
  if (url.username || url.password) throw new DomainError('invalid', 'endpoint must not carry a user name or password');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!allowPrivate && isIP(host)) {
    const reason = refusedAddressReason(host);
    if (reason) throw new DomainError('invalid', `endpoint is at ${host}, which notifications may not reach: ${reason}`);
  }
  return raw;
}

/**
 * The caller's own notification channels and browsers (docs/api/notifications.md): any valid
 * credential reads its own user's; only a live one changes them, as with PATCH /users/me.
 */
export function notificationSettingRoutes({ db, notifications }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();
  const server: NotificationServer = notifications;
  const current = async (c: Context<AppEnv>) => {
    const { scope, timezone } = c.get('principal');
    const channels = await ownChannels(db, scope.userId);
    if (!channels) throw new DomainError('not_found', 'user not found');
    return ownChannelsView(channels, await pushSubscriptionsOf(db, scope.userId), server, timezone);
  };

  app.openapi(routes.get, async (c) => c.json(envelope(await current(c)), 200));

  app.openapi(routes.patch, async (c) => {
    const body = c.req.valid('json');
    await changeOwnChannels(db, c.get('principal').scope.userId, {
      email: blankToNull(body.email), telegramChatId: blankToNull(body.telegramChatId), phone: blankToNull(body.phone),
      muted: body.muted, mutedUntil: body.mutedUntil === undefined ? undefined : body.mutedUntil === null ? null : new Date(body.mutedUntil),
    });
    return c.json(envelope(await current(c)), 200);
  });

  app.openapi(routes.subscribe, async (c) => {
    const body = c.req.valid('json');
    const endpoint = checkedEndpoint(body.endpoint, server.allowPrivatePushEndpoints);
    const p256dh = decodedLength(body.keys.p256dh);
    if (p256dh !== 65 || Buffer.from(body.keys.p256dh, 'base64url')[0] !== 0x04) throw new ApiError(400, 'keys.p256dh must be base64url of an uncompressed P-256 public key (65 bytes, starting 0x04)');
    if (decodedLength(body.keys.auth) !== 16) throw new ApiError(400, 'keys.auth must be base64url of 16 bytes');
    const userId = c.get('principal').scope.userId;
    const subscription = { endpoint, p256dh: body.keys.p256dh, auth: body.keys.auth, userAgent: c.req.header('User-Agent')?.slice(0, 500) ?? null };
    const save = () => inTransaction(db, (trx) => savePushSubscription(trx, userId, subscription, PUSH_SUBSCRIPTIONS_PER_USER));
    // Two users saving one new endpoint at once: the second finds the first's row when it tries again.
    const saved = await save().catch((error: unknown) => {
      if (isUniqueViolation(error)) return save();
      throw error;
    });
    if (!saved) throw new ApiError(409, `A user may subscribe at most ${PUSH_SUBSCRIPTIONS_PER_USER} browsers, and this one has them all; delete one first (DELETE /users/me/push-subscriptions/{id})`);
    return c.json(envelope({ id: saved.id }), 201);
  });

  app.openapi(routes.unsubscribe, async (c) => {
    const subscriptionId = c.req.valid('param').id;
    if (!(await deletePushSubscription(db, c.get('principal').scope.userId, subscriptionId))) throw new ApiError(404, `Push subscription not found: ${subscriptionId}`);
    return c.body(null, 204);
  });

  return app;
}

import { isDeepStrictEqual } from 'node:util';
import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { cancelQueuedCommand, queueCommand, type CommandRow } from '../../db/commands.ts';
import type { CommandStatus } from '../../db/schema.ts';
import { commandPage, commandTarget, visibleCommand, type CommandTarget } from '../../db/visible-commands.ts';
import { COMMAND_TYPES, type CommandRequest } from '../../domain/commands/command-catalog.ts';
import { commandEncoder, unsupportedReason } from '../../ingest/protocol-catalog.ts';
import { redactedCommand } from '../../domain/commands/command-redaction.ts';
import { safeStopHold } from '../../domain/commands/safe-stop-rule.ts';
import { grants } from '../../domain/access/permissions.ts';
import { recordAudit } from '../../db/audit-log.ts';
import { inTransaction } from '../../db/database.ts';
import { ApiError } from '../api-error.ts';
import { auditActor } from '../audit-actor.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { clientAddress } from '../client-address.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import { decodeNameCursor, encodeNameCursor, type CursorContext } from '../pagination/name-cursor.ts';
import { commaList } from '../query/comma-list.ts';
import type { RouteDeps } from '../route-deps.ts';
import { COMMAND_STATUSES, CommandSchema, commandView } from '../views/command-view.ts';

const NOT_FOUND = 'Command not found or no access';
const DEVICE_NOT_FOUND = 'Device not found or no access';
const MAX_LIMIT = 500;
const DEFAULT_TTL_S = 86_400;
const MAX_TTL_S = 30 * 86_400;
const MAX_PARAMS_CHARS = 2_048;
const BIGINT_MAX = 9_223_372_036_854_775_807n;

const noNul = (s: string) => !s.includes('\u0000');
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

const commandId = z
  .string()
  .regex(/^\d{1,19}$/, 'id must be a number')
  // Refinements run even when the pattern failed, so guard the conversion.
  .refine((v) => !/^\d{1,19}$/.test(v) || BigInt(v) <= BIGINT_MAX, 'id is out of range')
  .openapi({ param: { name: 'id', in: 'path' }, example: '88' });

const CreateBody = z
  .object({
    deviceId: z.string().min(1).max(64).refine(noNul, 'deviceId must not contain NUL characters').openapi({ description: 'The IMEI', example: '356307042441013' }),
    type: z.enum(COMMAND_TYPES).openapi({ description: 'What to do; the device\'s protocol must be able to express it (see the README\'s command table)' }),
    params: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({
        description: 'Per type and protocol: `output` (the digital output driving the relay or siren), `force: true` (send engine_stop at any speed), `variant` and `password` (GT06), `password` (Queclink), `camera` (Meitrack), `time` (H02)',
        example: { output: 1 },
      }),
    text: z.string().min(1).max(1000).refine(noNul, 'text must not contain NUL characters').optional().openapi({ description: 'The raw command of a custom command, as the device\'s manual writes it', example: 'getinfo' }),
    ttlSeconds: z.number().int().min(1).max(MAX_TTL_S).optional().openapi({ description: `Seconds the command may wait to be sent and answered; 1 to ${MAX_TTL_S}, default ${DEFAULT_TTL_S}` }),
    maxAttempts: z.number().int().min(1).max(10).optional().openapi({ description: 'Sends before an unanswered command fails (default COMMAND_MAX_ATTEMPTS, 3); 1 for a command that must never be repeated' }),
    idempotencyKey: z.string().min(1).max(200).refine(noNul, 'idempotencyKey must not contain NUL characters').optional().openapi({
      description: 'Repeating a request with the same key (of the same API key) returns the first command instead of queuing another; also accepted as the Idempotency-Key header',
      example: 'stop-truck-12-2024-05-01',
    }),
  })
  .strict()
  .openapi('CommandCreate');

const ListQuery = z.object({
  deviceId: z.string().min(1).max(64).refine(noNul, 'deviceId must not contain NUL characters').optional().openapi({ description: 'Only this device\'s commands (IMEI)' }),
  status: z.string().max(200).optional().openapi({ description: `Comma-separated: any of ${COMMAND_STATUSES.join(', ')}`, example: 'queued,sent' }),
  limit: z.coerce.number().int().min(1).max(MAX_LIMIT).default(50).openapi({ description: `1 to ${MAX_LIMIT}, default 50` }),
  cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page, with the same deviceId and status' }),
});

const CommandPage = z
  .object({ data: z.array(CommandSchema), has_more: z.boolean(), next_cursor: z.string().nullable().openapi({ description: 'null when has_more is false' }) })
  .openapi('CommandPage');

const LIFECYCLE = [
  'A command is a record first: `queued` (waiting for the device\'s connection, or for the vehicle to slow down, see `reason`), `sent` (written to the tracker\'s connection), then `acknowledged` (the tracker answered; `response` holds the answer), `failed` (the tracker refused it, or its last attempt went unanswered; `error` says which), `expired` (`ttlSeconds` passed first) or `cancelled` (DELETE before it was sent).',
  'A device gets its commands one at a time, oldest first, right after it logs in or as soon as one is queued while it is connected. Each change of state is an event: command.sent, command.acknowledged, command.failed, command.expired, command.cancelled.',
  'Safety: an engine_stop goes only on a current fix (at most COMMAND_SAFE_STOP_MAX_FIX_AGE_S old, default 60 s, valid, received on the tracker\'s current connection) at or below COMMAND_SAFE_STOP_KMH (default 20 km/h); until then it waits, `reason` saying for what. It is judged at every send: one sent on a connection that closed unanswered is judged again before it is sent on the next. `params.force: true` overrides.',
  'Raw `custom` text reaches the tracker as written, and no safety rule can read it (it may cut the engine at speed): it needs `commands:custom` besides `commands:write`, both granted by name only, and every raw command is kept in the audit log with its text. Device passwords (params such as `password`, the password field of a Queclink `AT+GT...=` text) are shown as `[redacted]` in the audit log and in these answers.',
].join('\n\n');

/** The Commands tag's description in the OpenAPI document: the lifecycle, what each protocol is sent, the safety rule. */
export const COMMANDS_GUIDE = [
  LIFECYCLE,
  [
    '```',
    'POST ─▶ queued ─(its turn on the device\'s connection)─▶ sent ─(the tracker\'s answer)─▶ acknowledged',
    '          │  └ held: engine_stop without a current slow fix       ├─(refused, or last attempt unanswered)─▶ failed',
    '          ├─(DELETE)─▶ cancelled                                 └─(connection closed, attempts left: sent again on the next)',
    '          └─(ttlSeconds passed, queued or sent)─▶ expired',
    '```',
  ].join('\n'),
  [
    'What each protocol\'s trackers are sent (`<serial>`: the command\'s id, modulo what the field holds):',
    '',
    '| protocol | engine_stop / engine_resume | siren_on / siren_off | take_photo | custom |',
    '|---|---|---|---|---|',
    '| teltonika (Codec 12) | `setdigout 1` / `setdigout 0` (params.output 1-4) | `setdigout ?1` / `setdigout ?0` | - | any text |',
    '| gt06 (0x80, server flag = serial) | `Relay,1#` / `Relay,0#`; params.variant `dyd`: `DYD,<password>#` / `HFYD,<password>#` | - | - | any text |',
    '| h02 | `*HQ,<id>,S20,<HHMMSS>,1,1#` / `...,1,0#` | - | - | `*HQ,<id>,<cmd>,<HHMMSS>,<args>#` |',
    '| gl200 | `AT+GTOUT=<password>,1,...,<serial>$` / `...0...` on output 1 | the same on output 2 | - | any `AT+...$` text |',
    '| meitrack | `C01,0,12222` / `C01,0,02222` | `C01,0,21222` / `C01,0,20222` | `D03,<camera>,camera_picture.jpg`; acknowledged once the picture is stored (`response`: `media <id>`, see GET /media/{id}) | any content |',
    '| tk103 | `(<id>AV010)` / `(<id>AV011)` | - | - | `(<id><command word><body>)` |',
  ].join('\n'),
].join('\n\n');

const routes = {
  create: createRoute({
    method: 'post', path: '/commands', tags: ['Commands'], summary: 'Send a command to a tracker: engine cut-off and resume, siren, photo, or raw text',
    description: `${LIFECYCLE}\n\nThe key needs the commands:write permission, and for \`custom\` also commands:custom; \`*\` includes neither: they must be granted by name.`,
    middleware: [requirePermission('commands:write')] as const,
    request: {
      headers: z.object({ 'idempotency-key': z.string().max(202).optional().openapi({ description: 'The same as idempotencyKey in the body' }) }),
      body: { content: json(CreateBody), required: true },
    },
    responses: {
      202: {
        description: 'The command, queued (or, for a repeated idempotency key, the first command in whatever state it is now, with `Idempotent-Replayed: true`)',
        content: json(envelopeSchema(CommandSchema, 'CommandAccepted')),
      },
      ...errorResponses(
        [400, 'Invalid field, a type the device\'s protocol cannot express (the message names the protocol), or params that protocol cannot take'],
        [403, 'The key lacks commands:write, or commands:custom for a custom command'],
        [404, DEVICE_NOT_FOUND],
        [413, 'Body too large'],
        [415, 'Not JSON'],
        [422, 'The idempotency key was used for a different command'],
      ),
    },
  }),
  list: createRoute({
    method: 'get', path: '/commands', tags: ['Commands'], summary: 'A page of commands, newest first, with who sent each',
    description: 'Commands of the vehicles the key\'s user may see, in the key\'s mode. Keyset pages by id: a cursor continues after the last command returned, whatever is queued meanwhile; it is bound to the key\'s user and mode and to the filters, and refused with 400 otherwise.',
    middleware: [requirePermission('commands:read')] as const,
    request: { query: ListQuery },
    responses: { 200: { description: 'A page of commands', content: json(CommandPage) }, ...errorResponses([400, 'Invalid deviceId, status, limit or cursor']) },
  }),
  get: createRoute({
    method: 'get', path: '/commands/{id}', tags: ['Commands'], summary: 'One command and its state',
    description: LIFECYCLE,
    middleware: [requirePermission('commands:read')] as const,
    request: { params: z.object({ id: commandId }) },
    responses: { 200: { description: 'The command', content: json(envelopeSchema(CommandSchema, 'CommandResponse')) }, ...errorResponses([400, 'Invalid id'], [404, NOT_FOUND]) },
  }),
  cancel: createRoute({
    method: 'delete', path: '/commands/{id}', tags: ['Commands'], summary: 'Cancel a command that was not sent yet',
    description: 'Only a queued command can be cancelled (one held for the vehicle to slow down included); once bytes went to the tracker it is too late, and the answer is 409 with the command\'s state.',
    middleware: [requirePermission('commands:write')] as const,
    request: { params: z.object({ id: commandId }) },
    responses: {
      200: { description: 'The cancelled command', content: json(envelopeSchema(CommandSchema, 'CommandCancelled')) },
      ...errorResponses([400, 'Invalid id'], [404, NOT_FOUND], [409, 'The command is no longer queued']),
    },
  }),
};

/** The Idempotency-Key header as a plain string (the IETF draft writes it as a quoted structured-field string). */
function headerKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const key = /^"(.*)"$/.exec(raw)?.[1] ?? raw;
  if (key.length < 1 || key.length > 200) throw new ApiError(400, 'Idempotency-Key must be 1 to 200 characters');
  return key;
}

function statusFilter(raw: string | undefined): CommandStatus[] | undefined {
  const names = commaList(raw, 'status')?.map((s) => s.toLowerCase());
  if (!names) return undefined;
  const unknown = names.filter((s) => !(COMMAND_STATUSES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new ApiError(400, `status: unknown value ${unknown.map((s) => `"${s}"`).join(', ')}; use ${COMMAND_STATUSES.join(', ')}`);
  return names as CommandStatus[];
}

/** What a repeated request must ask again for the first command to count as its answer. */
const sameRequest = (first: CommandRow, again: Pick<CommandRow, 'device_id' | 'type' | 'params' | 'text' | 'max_attempts'>) =>
  first.device_id === again.device_id && first.type === again.type && first.text === again.text &&
  first.max_attempts === again.max_attempts && isDeepStrictEqual(first.params, again.params);

/** The device's newest stored fix as the safe-stop rule reads it. */
const storedFix = (t: CommandTarget) =>
  t.last_fix_time === null ? undefined : { speedKmh: t.last_speed_kmh, fixTime: t.last_fix_time, valid: t.last_fix_valid === true };

/** Refuses what the device's protocol cannot carry, before anything is stored, with the encoder's own words. */
function checkEncodable(protocol: string | null, imei: string, request: CommandRequest): void {
  const unsupported = unsupportedReason(protocol, request.type);
  if (unsupported) throw new ApiError(400, `Device ${imei} cannot take this command: ${unsupported}`);
  // What it cannot carry throws a CommandNotEncodable, a DomainError answered 400 with the encoder's own words.
  commandEncoder(protocol!)!.encode(request, { deviceId: imei, serial: 0 });
}

export function commandRoutes({ db, log, config, commandBus }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();
  const safeStop = { thresholdKmh: config.commands?.safeStopKmh ?? 20, maxFixAgeMs: config.commands?.safeStopMaxFixAgeMs ?? 60_000 };
  const defaultAttempts = config.commands?.maxAttempts ?? 3;

  // The holder of the device's connection is told at once; if the message is lost, its sweep finds the command.
  const tellHolder = (deviceId: number) => {
    commandBus?.notify(deviceId).catch((error: Error) => log.warn('could not notify the process holding the device; its sweep will deliver', { deviceId, error: error.message }));
  };

  app.openapi(routes.create, async (c) => {
    const body = c.req.valid('json');
    const principal = c.get('principal');
    const { scope } = principal;
    const fromHeader = headerKey(c.req.valid('header')['idempotency-key']);
    if (fromHeader !== undefined && body.idempotencyKey !== undefined && fromHeader !== body.idempotencyKey) {
      throw new ApiError(400, 'The Idempotency-Key header and idempotencyKey in the body differ; send one');
    }
    const params = body.params ?? {};
    if (JSON.stringify(params).length > MAX_PARAMS_CHARS) throw new ApiError(400, `params must be at most ${MAX_PARAMS_CHARS} characters as JSON`);
    if (params.force !== undefined && typeof params.force !== 'boolean') throw new ApiError(400, 'params.force must be true or false');
    if (body.type === 'custom' && body.text === undefined) throw new ApiError(400, 'text is required for a custom command');
    if (body.type !== 'custom' && body.text !== undefined) throw new ApiError(400, 'text is only for custom commands; the other types are encoded from type and params');
    if (body.type === 'custom' && !grants(principal.permissions, 'commands:custom')) {
      throw new ApiError(403, 'This API key lacks the commands:custom permission (raw command text is granted by name only)');
    }

    const vehicle = await commandTarget(db, scope, body.deviceId);
    if (!vehicle) throw new ApiError(404, DEVICE_NOT_FOUND);
    const request: CommandRequest = { type: body.type, params, ...(body.text === undefined ? {} : { text: body.text }) };
    checkEncodable(vehicle.protocol, vehicle.imei, request);

    const maxAttempts = body.maxAttempts ?? defaultAttempts;
    const { command, created } = await inTransaction(db, async (trx) => {
      const queued = await queueCommand(trx, {
      accountId: scope.accountId, deviceId: vehicle.id, userId: scope.userId,
      apiKeyId: principal.credential.kind === 'api_key' ? principal.credential.id : null,
      oauthClientId: principal.credential.kind === 'oauth_token' ? principal.credential.clientId : null,
      type: body.type, params, text: body.text ?? null, idempotencyKey: fromHeader ?? body.idempotencyKey ?? null,
      expiresAt: new Date(Date.now() + (body.ttlSeconds ?? DEFAULT_TTL_S) * 1000), maxAttempts,
      // A first word for the dispatcher; the connection's holder judges again on its own connection's fixes before it sends.
      requestedFrom: clientAddress(c), holdReason: safeStopHold(request, storedFix(vehicle), safeStop),
      });
      if (queued.created) {
        const shown = redactedCommand(request);
        await recordAudit(trx, auditActor(c), {
          action: 'command.created', targetType: 'command', targetId: queued.command.id,
          details: { deviceId: vehicle.imei, type: body.type, params: shown.params, ...(shown.text === undefined ? {} : { text: shown.text }) },
        });
      }
      return queued;
    });
    if (!created && !sameRequest(command, { device_id: vehicle.id, type: body.type, params, text: body.text ?? null, max_attempts: maxAttempts })) {
      throw new ApiError(422, `The idempotency key was used for another command (${command.id}); use a new key for a different command`);
    }
    if (created) tellHolder(vehicle.id);
    const view = commandView((await visibleCommand(db, scope, command.id))!);
    return c.json(envelope(view), 202, created ? {} : { 'Idempotent-Replayed': 'true' });
  });

  app.openapi(routes.list, async (c) => {
    const query = c.req.valid('query');
    const { scope } = c.get('principal');
    const statuses = statusFilter(query.status);
    const context: CursorContext = { owner: `${scope.userId}:${scope.mode}`, filters: { deviceId: query.deviceId, status: statuses } };
    // Newest first by id alone: the id is the whole key, carried in the cursor's name and id both.
    const after = query.cursor === undefined ? undefined : decodeNameCursor('commands', context, query.cursor, (v) => /^\d{1,19}$/.test(v));
    if (after && after.name !== after.id) throw new ApiError(400, 'cursor is not one this list returned; start again without it');
    const rows = await commandPage(db, scope, { imei: query.deviceId, statuses, beforeId: after?.id, limit: query.limit });
    const page = rows.slice(0, query.limit);
    const hasMore = rows.length > query.limit;
    const last = page[page.length - 1];
    return c.json({
      data: page.map(commandView),
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeNameCursor('commands', context, { name: last.id, id: last.id }) : null,
    }, 200);
  });

  app.openapi(routes.get, async (c) => {
    const row = await visibleCommand(db, c.get('principal').scope, c.req.valid('param').id);
    if (!row) throw new ApiError(404, NOT_FOUND);
    return c.json(envelope(commandView(row)), 200);
  });

  app.openapi(routes.cancel, async (c) => {
    const { scope } = c.get('principal');
    const id = c.req.valid('param').id;
    const row = await visibleCommand(db, scope, id);
    if (!row) throw new ApiError(404, NOT_FOUND);
    const cancelled = await inTransaction(db, async (trx) => {
      const done = await cancelQueuedCommand(trx, scope.accountId, id);
      if (done) await recordAudit(trx, auditActor(c), { action: 'command.cancelled', targetType: 'command', targetId: id, details: { deviceId: row.imei, type: row.type } });
      return done;
    });
    if (!cancelled) {
      const now = await visibleCommand(db, scope, id);
      throw new ApiError(409, `Only a queued command can be cancelled; this one is ${now?.status ?? row.status}`);
    }
    // A held engine stop no longer blocks the device's later commands.
    tellHolder(cancelled.device_id);
    return c.json(envelope(commandView((await visibleCommand(db, scope, id))!)), 200);
  });

  return app;
}

import { z } from '@hono/zod-openapi';
import type { VisibleCommandRow } from '../../db/visible-commands.ts';
import { COMMAND_TYPES } from '../../domain/commands/command-catalog.ts';
import { redactedCommand } from '../../domain/commands/command-redaction.ts';

export const COMMAND_STATUSES = ['queued', 'sent', 'acknowledged', 'failed', 'expired', 'cancelled'] as const;

const time = (description: string) => z.string().nullable().openapi({ format: 'date-time', description });

export const CommandSchema = z
  .object({
    id: z.string().openapi({ example: '88' }),
    deviceId: z.string().openapi({ description: 'The IMEI', example: '356307042441013' }),
    type: z.enum(COMMAND_TYPES),
    params: z.record(z.string(), z.unknown()).openapi({ example: {}, description: 'As sent, with device passwords shown as `[redacted]`' }),
    text: z.string().nullable().openapi({ description: 'The raw text of a custom command (a Queclink password field shown as `[redacted]`)' }),
    status: z.enum(COMMAND_STATUSES),
    reason: z.string().nullable().openapi({
      description: 'Why a queued command has not been sent yet, or a sent one not sent again on the tracker\'s new connection: `waiting for a current fix from the vehicle` or `waiting for the vehicle to slow down` (the safe stop rule)',
      example: null,
    }),
    attempts: z.number().int().openapi({ description: 'Times it was written to a tracker connection' }),
    maxAttempts: z.number().int().openapi({ description: 'Sends before an unanswered command fails' }),
    createdAt: z.string().openapi({ format: 'date-time' }),
    sentAt: time('The latest send; null while queued'),
    acknowledgedAt: time('When the tracker\'s answer arrived'),
    finishedAt: time('When it reached acknowledged, failed, expired or cancelled'),
    expiresAt: z.string().openapi({ format: 'date-time', description: 'Past it, an unanswered command expires' }),
    response: z.string().nullable().openapi({ description: 'The tracker\'s answer, as text', example: 'DOUT1:1 Timeout:INFINITY' }),
    error: z.string().nullable().openapi({ description: 'Why it failed', example: null }),
    idempotencyKey: z.string().nullable(),
    issuedBy: z
      .object({
        keyId: z.number().int().nullable().openapi({ description: 'null once the key is deleted' }),
        keyPrefix: z.string().nullable().openapi({ example: 'fc_live_AbC123' }),
        keyName: z.string().nullable(),
        clientId: z.string().nullable().openapi({ description: 'The OAuth client whose access token sent it (keyId is then null)', example: null }),
        userId: z.number().int().nullable(),
        address: z.string().nullable().openapi({ description: 'The client address the request came from', example: '203.0.113.9' }),
      })
      .openapi({ description: 'Who sent it: the audit trail' }),
  })
  .openapi('Command');

export type CommandView = z.infer<typeof CommandSchema>;

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export function commandView(c: VisibleCommandRow): CommandView {
  const shown = redactedCommand({ params: c.params, ...(c.text === null ? {} : { text: c.text }) });
  return {
    id: c.id,
    deviceId: c.imei,
    type: c.type,
    params: shown.params,
    text: shown.text ?? null,
    status: c.status,
    reason: c.status === 'queued' || c.status === 'sent' ? c.status_reason : null,
    attempts: c.attempts,
    maxAttempts: c.max_attempts,
    createdAt: c.created_at.toISOString(),
    sentAt: iso(c.sent_at),
    acknowledgedAt: iso(c.acknowledged_at),
    finishedAt: iso(c.finished_at),
    expiresAt: c.expires_at.toISOString(),
    response: c.response,
    error: c.status === 'failed' ? c.status_reason : null,
    idempotencyKey: c.idempotency_key,
    issuedBy: { keyId: c.api_key_id, keyPrefix: c.key_prefix, keyName: c.key_name, clientId: c.public_client_id, userId: c.user_id, address: c.requested_from },
  };
}

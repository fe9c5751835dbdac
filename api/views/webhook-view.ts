import { z } from '@hono/zod-openapi';
import type { Selectable } from 'kysely';
import type { WebhookDeliveriesTable, WebhookDeliveryAttemptsTable, WebhooksTable } from '../../db/schema.ts';

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export const WebhookSchema = z
  .object({
    id: z.number().int(),
    url: z.string().openapi({ example: 'https://example.com/hooks/fleet' }),
    events: z.array(z.string()).openapi({ example: ['vehicle.geofence.*', 'vehicle.panic'] }),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabledReason: z.string().nullable().openapi({ description: 'Why the webhook was disabled (410 Gone, too many failed events in a row, or through the API)' }),
    disabledAt: z.string().nullable().openapi({ format: 'date-time' }),
    previousSecretExpiresAt: z.string().nullable().openapi({ format: 'date-time', description: 'After a rotation, the old secret also signs until then' }),
    createdAt: z.string().openapi({ format: 'date-time' }),
    updatedAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Webhook');

export const WebhookWithSecretSchema = WebhookSchema.extend({
  secret: z.string().openapi({ description: 'Signing secret (Standard Webhooks): shown only when created or rotated', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
}).openapi('WebhookWithSecret');

export function webhookView(w: Selectable<WebhooksTable>): z.infer<typeof WebhookSchema> {
  return {
    id: w.id, url: w.url, events: w.events, description: w.description, enabled: w.enabled, disabledReason: w.disabled_reason,
    disabledAt: iso(w.disabled_at),
    previousSecretExpiresAt: w.previous_secret_expires_at && w.previous_secret_expires_at.getTime() > Date.now() ? w.previous_secret_expires_at.toISOString() : null,
    createdAt: w.created_at.toISOString(), updatedAt: w.updated_at.toISOString(),
  };
}

export const DeliverySchema = z
  .object({
    id: z.string(),
    eventId: z.string().nullable().openapi({ description: 'The logged event; null for a test ping' }),
    eventType: z.string().openapi({ example: 'vehicle.geofence.enter' }),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable().openapi({ description: 'HTTP status of the last attempt; null when there was none (no attempt yet, a network error, a timeout)' }),
    lastError: z.string().nullable(),
    lastDurationMs: z.number().int().nullable(),
    lastAttemptAt: z.string().nullable().openapi({ format: 'date-time' }),
    nextAttemptAt: z.string().nullable().openapi({ format: 'date-time', description: 'When the next attempt is due; null once succeeded or failed' }),
    createdAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('WebhookDelivery');

export const AttemptSchema = z
  .object({
    attempt: z.number().int(),
    attemptedAt: z.string().openapi({ format: 'date-time' }),
    statusCode: z.number().int().nullable(),
    error: z.string().nullable(),
    durationMs: z.number().int(),
  })
  .openapi('WebhookDeliveryAttempt');

export function deliveryView(d: Selectable<WebhookDeliveriesTable>): z.infer<typeof DeliverySchema> {
  return {
    id: String(d.id), eventId: d.event_id === null ? null : String(d.event_id), eventType: d.event_type, status: d.status, attempts: d.attempts, lastStatusCode: d.last_status_code,
    lastError: d.last_error, lastDurationMs: d.last_duration_ms, lastAttemptAt: iso(d.last_attempt_at),
    nextAttemptAt: d.status === 'pending' ? iso(d.next_attempt_at) : null, createdAt: d.created_at.toISOString(),
  };
}

export function attemptView(a: Selectable<WebhookDeliveryAttemptsTable>): z.infer<typeof AttemptSchema> {
  return { attempt: a.attempt, attemptedAt: a.attempted_at.toISOString(), statusCode: a.status_code, error: a.error, durationMs: a.duration_ms };
}

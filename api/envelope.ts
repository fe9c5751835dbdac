import { z } from '@hono/zod-openapi';

/** The response envelope of the detailed endpoints. */
export function envelope<T>(data: T) {
  return { success: true as const, data, error: null, timestamp: new Date().toISOString() };
}

export function errorEnvelope(message: string) {
  return { success: false as const, data: null, error: message, timestamp: new Date().toISOString() };
}

export function envelopeSchema<T extends z.ZodType>(data: T, name: string) {
  return z
    .object({
      success: z.literal(true),
      data,
      error: z.null(),
      timestamp: z.string().openapi({ format: 'date-time', example: '2024-05-01T14:30:00.000Z' }),
    })
    .openapi(name);
}

export const ErrorEnvelope = z
  .object({
    success: z.literal(false),
    data: z.null(),
    error: z.string().openapi({ example: 'Device not found or no access' }),
    timestamp: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Error');

const errorContent = { 'application/json': { schema: ErrorEnvelope } };

/** OpenAPI responses every authenticated endpoint shares. */
export function errorResponses<S extends number>(...extra: Array<[S, string]>) {
  const responses: Record<number, { description: string; content: typeof errorContent }> = {
    401: { description: 'API key missing, invalid, revoked or expired', content: errorContent },
    403: { description: 'The API key lacks the permission this endpoint needs', content: errorContent },
    429: { description: 'Rate limit exceeded; see Retry-After', content: errorContent },
    500: { description: 'Unexpected failure, such as the database being unreachable', content: errorContent },
  };
  for (const [status, description] of extra) responses[status] = { description, content: errorContent };
  return responses;
}

import { z } from '@hono/zod-openapi';
import type { MediaRow } from '../../db/media.ts';
import { mediaUrl } from '../../domain/events/event-payloads.ts';
import { MEDIA_CONTENT_TYPES } from '../../domain/media/media-content.ts';

export const MediaSchema = z
  .object({
    id: z.string().openapi({ example: '123' }),
    vehicleId: z.string().openapi({ description: 'The IMEI', example: '864507031219974' }),
    takenAt: z.string().openapi({ format: 'date-time', description: 'The tracker\'s time for the picture when its protocol carries one (a Meitrack event picture\'s name), else when it arrived' }),
    receivedAt: z.string().openapi({ format: 'date-time', description: 'When its last byte was stored' }),
    contentType: z.enum(MEDIA_CONTENT_TYPES).openapi({ description: 'Read from the bytes (JPEG or PNG), never from a name' }),
    size: z.number().int().openapi({ description: 'Bytes', example: 48213 }),
    fileName: z.string().openapi({ description: 'The tracker\'s name for it, reduced to letters, digits, `.`, `_` and `-`, with the extension of its type', example: 'camera_picture.jpg' }),
    sha256: z.string().openapi({ description: 'Hex SHA-256 of the bytes; also the ETag of `url`', example: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' }),
    protocol: z.string().openapi({ description: 'The tracker protocol it came over', example: 'meitrack' }),
    commandId: z.string().nullable().openapi({ description: 'The take_photo command it answers; null for a picture the tracker took on its own', example: '88' }),
    url: z.string().openapi({ description: 'Where its bytes are (GET, media:read)', example: '/api/v1/media/123' }),
  })
  .openapi('Media');

export type MediaView = z.infer<typeof MediaSchema>;

export function mediaView(m: MediaRow): MediaView {
  return {
    id: m.id,
    vehicleId: m.imei,
    takenAt: m.taken_at.toISOString(),
    receivedAt: m.received_at.toISOString(),
    contentType: m.content_type as MediaView['contentType'],
    size: m.size,
    fileName: m.file_name,
    sha256: m.sha256,
    protocol: m.protocol,
    commandId: m.command_id,
    url: mediaUrl(m.id),
  };
}

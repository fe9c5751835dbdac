import { createHash } from 'node:crypto';
import { storeMedia, type NewMedia } from '../db/media.ts';
import type { Db } from '../db/database.ts';
import { mediaFileName, sniffMediaType, unstorableMedia } from '../domain/media/media-content.ts';
import type { CommandDelivery, CommandLink } from './commands/command-delivery.ts';
import type { IngestCounters } from './ingest-counters.ts';
import type { DecodedFrame } from './protocol.ts';
import type { ThrottledNotice } from './throttled-notice.ts';

/** Where ingest keeps the pictures trackers send: MEDIA_MAX_BYTES and the database. */
export interface TrackerMedia {
  /** Largest picture kept; decoders give up a transfer past it (DecoderSession.mediaMaxBytes). */
  maxBytes: number;
  store(media: NewMedia): ReturnType<typeof storeMedia>;
}

export function databaseMedia(db: Db, maxBytes: number): TrackerMedia {
  return { maxBytes, store: (media) => storeMedia(db, media) };
}

export interface PictureSource {
  deviceId: number;
  imei: string;
  protocol: string;
  media: TrackerMedia;
  counters: IngestCounters;
  notice: ThrottledNotice;
  commands?: CommandDelivery;
  commandLink?: CommandLink;
}

/**
 * A frame's picture: checked (size, and the type its bytes show), stored with its `vehicle.media`
 * event and the take_photo command it completes, in one transaction, before the frame's reply goes.
 * A picture that cannot be kept is counted, logged once an hour per device, and fails the take_photo
 * awaiting it, with the reason.
 */
export async function keepPicture(decoded: Pick<DecodedFrame, 'media' | 'mediaDropped'>, source: PictureSource): Promise<void> {
  const { media, counters, notice, commands, commandLink } = source;
  const refuse = (reason: string) => {
    counters.mediaRefused++;
    notice.warn(`media:${source.deviceId}`, 'tracker picture not kept', { imei: source.imei, protocol: source.protocol, reason });
    if (commands && commandLink) commands.photoRefused(commandLink, reason);
  };
  if (decoded.mediaDropped !== undefined) refuse(decoded.mediaDropped);
  const picture = decoded.media;
  if (!picture) return;
  const unstorable = unstorableMedia(picture.bytes, media.maxBytes);
  const contentType = sniffMediaType(picture.bytes);
  if (unstorable !== undefined || contentType === undefined) return refuse(unstorable ?? 'not an image');
  const commandId = commands && commandLink ? commands.awaitedPhoto(commandLink) : undefined;
  const stored = await media.store({
    deviceId: source.deviceId,
    takenAt: picture.time ?? null,
    contentType,
    fileName: mediaFileName(picture.fileName, contentType),
    sha256: createHash('sha256').update(picture.bytes).digest('hex'),
    protocol: source.protocol,
    commandId: commandId ?? null,
    bytes: picture.bytes,
  });
  counters.mediaStored++;
  if (commandId !== undefined && commands && commandLink) commands.photoStored(commandLink, commandId, stored.media.id, stored.acknowledged);
}

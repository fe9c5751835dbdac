import type { CommandDelivery } from './commands/command-delivery.ts';
import { decodedRows } from './decoded-rows.ts';
import { DEVICE_ID } from './device-id.ts';
import type { GroupCommitWriter } from './group-commit.ts';
import type { IngestCounters } from './ingest-counters.ts';
import { ingestMetrics } from './ingest-metrics.ts';
import { MalformedFrameError } from './malformed-frame-error.ts';
import type { DecodedFrame, DecoderSession, Protocol } from './protocol.ts';
import type { ThrottledNotice } from './throttled-notice.ts';
import { keepPicture, type TrackerMedia } from './tracker-media.ts';
import type { TrackerIdentity } from './tracker-identity.ts';

/** One tracker connection as its frames are handled: made once per connection, passed with every frame. */
export interface TrackerFrameContext {
  protocol: Protocol;
  /** The metric labels of this connection's frames. */
  labels: { protocol: string };
  /** What the decoder keeps between this connection's frames. */
  session: DecoderSession;
  identity: TrackerIdentity;
  writer: GroupCommitWriter;
  counters: IngestCounters;
  /** Once-per-device-per-hour warnings about data that could not be kept as sent. */
  notice: ThrottledNotice;
  /** Gives identified devices their commands; absent, none are sent. */
  commands?: CommandDelivery;
  /** Where the pictures trackers send are kept; absent, they are not. */
  media?: TrackerMedia;
  /** Aborted when the connection closes: what it still waits for leaves the commit wait list. */
  gone: AbortSignal;
  /** Writes bytes unless the connection is gone; false when it is. */
  send(bytes: Uint8Array | undefined): boolean;
  close(reason: string, fields?: Record<string, unknown>): void;
}

/**
 * One frame: decoded, its device identified, its rows committed (and a picture it completes stored), then its reply sent (never before the
 * commit, so a tracker that gets no reply resends and nothing is lost), then its command answer and
 * fixes told to the command delivery. Throws what the commit throws; the connection ends without a reply.
 */
export async function handleTrackerFrame(frame: Uint8Array, connection: TrackerFrameContext): Promise<void> {
  const { protocol, labels, session, identity, commands } = connection;
  const started = performance.now();
  let decoded: DecodedFrame;
  try {
    decoded = protocol.decode(frame, session);
  } catch (error) {
    if (error instanceof MalformedFrameError) {
      ingestMetrics.malformedFrames.inc(labels);
      return connection.close('malformed frame', { error: error.message });
    }
    throw error;
  }
  if (decoded.deviceId !== undefined && !DEVICE_ID.test(decoded.deviceId)) {
    // No device can be registered under it: a malformed frame, not a lookup.
    ingestMetrics.malformedFrames.inc(labels);
    return connection.close('malformed frame', { error: `device id of ${decoded.deviceId.length} characters is not one a device can have` });
  }
  ingestMetrics.frames.inc(labels);
  const id = decoded.deviceId ?? session.deviceId;
  if (id !== undefined && !(await identity.identify(id))) return;
  const { device } = identity;
  if (!device) {
    connection.send(decoded.reply);
    return;
  }
  const { fixes, reports } = decodedRows(decoded, device, protocol.name, connection);
  if (fixes.length > 0 || reports.length > 0) {
    ingestMetrics.positionsDecoded.inc(labels, fixes.length);
    // The frame is copied (it is small) for a dead letter, rather than holding the socket's read buffer it views.
    await connection.writer.submit({ fixes, reports, protocol: protocol.name, frame: Uint8Array.from(frame) }, connection.gone);
    ingestMetrics.positionsStored.inc(labels, fixes.length);
  }
  if ((decoded.media || decoded.mediaDropped) && connection.media) {
    // Stored before the reply: a tracker whose last piece goes unanswered sends it again.
    await keepPicture(decoded, {
      deviceId: device.id, imei: device.imei, protocol: protocol.name, media: connection.media,
      counters: connection.counters, notice: connection.notice, commands, commandLink: identity.commandLink,
    });
  }
  if (connection.send(decoded.reply) && decoded.reply) ingestMetrics.ackLatency.observe(labels, (performance.now() - started) / 1000);
  const { commandLink } = identity;
  if (commandLink && commands) {
    if (decoded.answer) commands.answered(commandLink, decoded.answer);
    if (fixes.length > 0) commands.fixesStored(commandLink, fixes);
  }
}

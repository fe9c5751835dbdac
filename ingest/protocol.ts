import type { CommandEncoder } from '../domain/commands/command-catalog.ts';
import type { ConnectionType } from '../domain/device-signal.ts';

/**
 * The contract every tracker protocol implements: a framer that cuts a byte stream into whole
 * frames, a pure decoder from one frame to identification, positions and the exact reply bytes, and
 * the encoder of the commands its devices take. None knows about sockets, databases or queues, so
 * each is tested and benchmarked on bytes alone.
 */

/**
 * Attribute values decoded from a message. Names follow the vocabulary most tracking servers share
 * (`ignition`, `motion`, `power` and `battery` in volts, `batteryLevel` in %, `rssi`, `odometer` in
 * metres, `driverUniqueId`, `alarm`, `io<N>` for unmapped raw inputs), so operators recognise them.
 */
export type AttributeValue = string | number | boolean;

/**
 * The tracker's radio in the specification's terms (domain/device-signal.ts), set by the decoder that
 * knows its protocol's scale; the raw values stay in the attributes (`rssi` and the protocol's own).
 */
export interface DecodedRadio {
  /** GSM signal, 0 to 31, converted from the protocol's own scale. */
  signalStrength?: number;
  /** The network technology the tracker says it is on. */
  connectionType?: ConnectionType;
}

export interface DecodedPosition extends DecodedRadio {
  fixTime: Date;
  /** The device says the fix is valid (GPS lock). */
  valid: boolean;
  latitude: number;
  longitude: number;
  /** Metres above sea level. */
  altitude?: number;
  speedKmh?: number;
  /** Degrees clockwise from north, 0 to 360. */
  heading?: number;
  satellites?: number;
  attributes: Record<string, AttributeValue>;
}

/**
 * Telemetry without a position fix: a heartbeat with battery and signal, an alarm, a command's
 * result. It updates the device's latest state and last-report time, but adds no position.
 */
export interface DecodedReport extends DecodedRadio {
  time?: Date;
  attributes: Record<string, AttributeValue>;
}

/**
 * A device's answer to a command the server sent it. The command delivery (ingest/commands/)
 * matches it to the command awaiting an answer on the connection and acknowledges that command.
 */
export interface CommandAnswer {
  /** What the device said: its answer text, or hex when the answer is not text. */
  text: string;
  /**
   * The number the answer echoes from its command, where the protocol has one (GT06's server flag,
   * Queclink's serial number): an answer to another command, or to an earlier one, is told apart by it.
   */
  serial?: number;
  /**
   * The tracker has begun the command and its result follows in later frames (Meitrack's D03 answer
   * to take_photo: the picture is being taken). The command stays `sent` and its answer wait starts
   * over; what completes it (the picture stored) acknowledges it.
   */
  progress?: boolean;
}

/**
 * A file the tracker finished sending (a camera picture), assembled from its chunks by the decoder.
 * Ingest keeps it only when its bytes are an image it can serve (JPEG or PNG, read from the bytes,
 * never from the name or the guess) and it is no larger than MEDIA_MAX_BYTES.
 */
export interface DecodedMedia {
  bytes: Uint8Array;
  /** What the protocol says it sends (`image/jpeg`); only a hint. */
  contentType: string;
  /** The name the tracker gave it, if any. */
  fileName?: string;
  /** The tracker's time for the picture, when the protocol carries one. */
  time?: Date;
}

export interface DecodedFrame {
  /** The device identifier this frame carries (a login, or every message in text protocols). */
  deviceId?: string;
  positions: DecodedPosition[];
  reports?: DecodedReport[];
  /** The frame answers a command (its text is also kept as the report's or fix's `result`). */
  answer?: CommandAnswer;
  /** A picture the tracker finished sending with this frame; stored with its event before the reply goes. */
  media?: DecodedMedia;
  /** A transfer the decoder gave up (larger than the session's mediaMaxBytes, say): why. */
  mediaDropped?: string;
  /**
   * Bytes to answer with. The connection sends them only after the positions are committed, so a
   * tracker that gets no answer resends and nothing is lost.
   */
  reply?: Uint8Array;
}

/** Per-connection state a decoder keeps between frames (the identified device, negotiated options). */
export interface DecoderSession {
  deviceId?: string;
  options: Record<string, unknown>;
  /** Largest file a decoder assembles (MEDIA_MAX_BYTES); a transfer that grows past it is given up. Default DEFAULT_MEDIA_MAX_BYTES. */
  mediaMaxBytes?: number;
}

/** MEDIA_MAX_BYTES' default: 5 MiB, well above a tracker camera's pictures (tens to hundreds of KiB). */
export const DEFAULT_MEDIA_MAX_BYTES = 5 * 1024 * 1024;

export type FrameResult =
  /** A whole frame at the start of the buffer, `consumed` bytes long (including any delimiter). */
  | { kind: 'frame'; frame: Uint8Array; consumed: number }
  /**
   * Not enough bytes yet. `frameBytes` is the whole frame's size when its header already says it, so
   * a frame too long is refused before its body arrives (see cutFrame).
   */
  | { kind: 'incomplete'; frameBytes?: number }
  /** Bytes to drop before the next frame (keep-alive bytes, line noise). */
  | { kind: 'skip'; consumed: number }
  /** The stream cannot be read as this protocol: close the connection. */
  | { kind: 'invalid'; reason: string };

export interface Protocol {
  name: string;
  /** The TCP port installers of this tracker expect. */
  defaultPort: number;
  /**
   * Largest frame accepted. Enforced in one place for every protocol (ingest/frame-cutter.ts), not by
   * the framers: a longer frame, or a stream with no frame end within this many bytes, is `invalid`.
   */
  maxFrameBytes: number;
  /** What to answer a login from an unknown device before closing; none when the protocol just hangs up. */
  rejectLogin?: Uint8Array;
  nextFrame(buffer: Uint8Array): FrameResult;
  /** Throws `MalformedFrameError` for a frame it cannot read; never anything else. */
  decode(frame: Uint8Array, session: DecoderSession): DecodedFrame;
  /**
   * Turns a command into the bytes this protocol's devices expect (`<name>-commands.ts`); undefined for
   * a protocol whose devices take no commands. Required, so a new protocol says which it is.
   */
  commands: CommandEncoder | undefined;
}

export function newSession(): DecoderSession {
  return { options: {} };
}

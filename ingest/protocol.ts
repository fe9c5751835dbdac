/**
 * The contract every tracker protocol implements: a framer that cuts a byte stream into whole
 * frames, and a pure decoder from one frame to identification, positions and the exact reply bytes.
 * Neither knows about sockets, databases or queues, so both are tested and benchmarked on bytes alone.
 */

/**
 * Attribute values decoded from a message. Names follow the vocabulary most tracking servers share
 * (`ignition`, `motion`, `power` and `battery` in volts, `batteryLevel` in %, `rssi`, `odometer` in
 * metres, `driverUniqueId`, `alarm`, `io<N>` for unmapped raw inputs), so operators recognise them.
 */
export type AttributeValue = string | number | boolean;

export interface DecodedPosition {
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
export interface DecodedReport {
  time?: Date;
  attributes: Record<string, AttributeValue>;
}

export interface DecodedFrame {
  /** The device identifier this frame carries (a login, or every message in text protocols). */
  deviceId?: string;
  positions: DecodedPosition[];
  reports?: DecodedReport[];
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
}

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
}

export function newSession(): DecoderSession {
  return { options: {} };
}

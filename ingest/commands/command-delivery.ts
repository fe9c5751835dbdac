import {
  acknowledgeCommand,
  devicesWithOpenCommands,
  failCommand,
  holdCommand,
  markCommandSent,
  nextCommandFor,
  type CommandRow,
} from '../../db/commands.ts';
import type { Db } from '../../db/database.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { CommandAnswer } from '../protocol.ts';
import { ThrottledNotice } from '../throttled-notice.ts';
import { answerRefuses } from '../../domain/commands/answer-outcome.ts';
import type { CommandBus } from './command-bus.ts';
import { CommandNotEncodable, commandSerial, type CommandRequest } from '../../domain/commands/command-catalog.ts';
import { commandEncoder, unsupportedReason } from '../protocol-catalog.ts';
import { newestFix, safeStopHold, type SpeedEvidence } from '../../domain/commands/safe-stop-rule.ts';

/** A tracker connection identified as a device, as the command delivery uses it. */
export interface CommandLink {
  deviceId: number;
  /** The id the device logged in with, which some protocols put in every command. */
  imei: string;
  protocol: string;
  /** What the device has told its decoder of itself on this connection (CommandContext.said). */
  said?: Readonly<Record<string, unknown>>;
  /** Writes bytes to the connection; false when it is gone. */
  write(bytes: Uint8Array): boolean;
}

export interface CommandDeliverySettings {
  /** A sent command unanswered this long is sent again, or fails on its last attempt. */
  answerTimeoutMs: number;
  /** COMMAND_SAFE_STOP_KMH: an engine stop waits while the vehicle is faster than this. */
  safeStopKmh: number;
  /** COMMAND_SAFE_STOP_MAX_FIX_AGE_S, in ms: an engine stop is judged only on a fix this recent. */
  safeStopMaxFixAgeMs: number;
  /** How often the connected devices' commands are looked at without being told (lost notifications, held commands). */
  sweepMs: number;
}

interface AwaitedAnswer {
  command: CommandRow;
  /** The number the answer must echo, when the protocol echoes one. */
  serial: number | undefined;
  timer: NodeJS.Timeout;
}

interface DeviceLine {
  link: CommandLink;
  awaiting: AwaitedAnswer | undefined;
  /** The oldest command is an engine stop waiting for a current, slow fix. */
  held: boolean;
  /**
   * The newest fix (by fix time) stored from this connection: the only evidence of speed an engine
   * stop is judged on. What the device reported before it identified on this connection is not.
   */
  fix: SpeedEvidence | undefined;
  /** Every database step of a device runs in order, one at a time. */
  chain: Promise<void>;
  pumpQueued: boolean;
  closed: boolean;
}

/**
 * Gives each connected device its commands: oldest first, one at a time, the next only once the
 * previous is answered, refused, or has had its last attempt. The database row is the truth (queued,
 * sent, acknowledged...); this process only remembers which command it awaits an answer to on which
 * connection. A command sent on a connection that closes before the answer stays `sent` and is sent
 * again on the device's next connection, until its attempts run out.
 */
export class CommandDelivery {
  private readonly lines = new Map<number, DeviceLine>();
  /** Lines of closed connections whose last steps (failing a command on its last attempt) still run. */
  private readonly closing = new Set<DeviceLine>();
  private readonly notice: ThrottledNotice;
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping = false;

  constructor(
    private readonly db: Db,
    private readonly bus: CommandBus,
    private readonly log: Logger,
    private readonly settings: CommandDeliverySettings,
  ) {
    this.notice = new ThrottledNotice(log, 60_000);
  }

  async start(): Promise<void> {
    await this.bus.listen((deviceId) => this.wake(deviceId));
    this.sweeper = setInterval(() => void this.sweep(), this.settings.sweepMs);
    this.sweeper.unref();
  }

  /** A connection identified as its device: it gets what is owed to it. */
  attach(link: CommandLink): void {
    const line: DeviceLine = { link, awaiting: undefined, held: false, fix: undefined, chain: Promise.resolve(), pumpQueued: false, closed: false };
    this.lines.set(link.deviceId, line);
    this.bus.claim(link.deviceId);
    this.pump(line);
  }

  /** The connection is done with. A command awaiting its answer is retried on the next, or fails on its last attempt. */
  detach(link: CommandLink, reason: string): void {
    const line = this.lines.get(link.deviceId);
    if (!line || line.link !== link) return;
    this.lines.delete(link.deviceId);
    this.bus.release(link.deviceId);
    line.closed = true;
    const awaited = line.awaiting;
    if (!awaited) return;
    clearTimeout(awaited.timer);
    line.awaiting = undefined;
    this.run(line, () => this.unanswered(awaited.command, `the connection closed before an answer (${reason})`));
    this.closing.add(line);
    void line.chain.then(() => this.closing.delete(line));
  }

  /** Something may be owed to this device (a command queued or cancelled). */
  wake(deviceId: number): void {
    const line = this.lines.get(deviceId);
    if (line) this.pump(line);
  }

  /** The device answered a command. */
  answered(link: CommandLink, answer: CommandAnswer): void {
    const line = this.lines.get(link.deviceId);
    if (!line || line.link !== link) return;
    this.run(line, () => this.settle(line, answer));
  }

  /**
   * The take_photo command awaiting its picture on this connection, if one does: the picture this
   * connection just finished sending completes it (db/media.ts acknowledges it with the picture).
   */
  awaitedPhoto(link: CommandLink): string | undefined {
    const line = this.lines.get(link.deviceId);
    if (line?.link !== link) return undefined;
    const command = line.awaiting?.command;
    return command?.type === 'take_photo' ? command.id : undefined;
  }

  /**
   * A picture was stored, acknowledging `commandId` in the same transaction: the line is free for the
   * device's next command. `acknowledged` false: the command had left `sent` meanwhile (expired).
   */
  photoStored(link: CommandLink, commandId: string, mediaId: string, acknowledged: boolean): void {
    const line = this.lines.get(link.deviceId);
    if (line?.link !== link || line.awaiting?.command.id !== commandId) return;
    clearTimeout(line.awaiting.timer);
    line.awaiting = undefined;
    if (acknowledged) this.log.info('command acknowledged', { commandId, deviceId: link.deviceId, response: `media ${mediaId}` });
    this.run(line, () => this.deliverNext(line));
  }

  /** A picture this connection sent could not be kept: the take_photo awaiting it fails with why. */
  photoRefused(link: CommandLink, reason: string): void {
    const line = this.lines.get(link.deviceId);
    const awaited = line?.link === link ? line.awaiting : undefined;
    if (!line || awaited?.command.type !== 'take_photo') return;
    clearTimeout(awaited.timer);
    line.awaiting = undefined;
    this.run(line, async () => {
      await this.fail(awaited.command, `the tracker's picture was not kept: ${reason}`);
      await this.deliverNext(line);
    });
  }

  /** Fixes this connection carried were stored: the vehicle's speed is known afresh, and a held engine stop may go now. */
  fixesStored(link: CommandLink, fixes: readonly SpeedEvidence[]): void {
    const line = this.lines.get(link.deviceId);
    if (line?.link !== link || fixes.length === 0) return;
    const { speedKmh, fixTime, valid } = newestFix(fixes, line.fix)!;
    line.fix = { speedKmh, fixTime, valid };
    if (line.held) this.pump(line);
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    for (const line of this.lines.values()) if (line.awaiting) clearTimeout(line.awaiting.timer);
    await Promise.all([...this.lines.values(), ...this.closing].map((l) => l.chain));
  }

  private run(line: DeviceLine, step: () => Promise<void>): void {
    line.chain = line.chain.then(step).catch((error: Error) => {
      // The database is unreachable or a step failed: the sweep comes back to this device.
      this.notice.warn(`delivery:${error.message}`, 'command delivery step failed; retried by the sweep', { deviceId: line.link.deviceId, error: error.message });
    });
  }

  private pump(line: DeviceLine): void {
    if (line.pumpQueued || line.closed) return;
    line.pumpQueued = true;
    this.run(line, async () => {
      line.pumpQueued = false;
      await this.deliverNext(line);
    });
  }

  private async deliverNext(line: DeviceLine): Promise<void> {
    for (;;) {
      if (line.closed || line.awaiting) return;
      const { link } = line;
      const next = await nextCommandFor(this.db, link.deviceId);
      if (!next) {
        line.held = false;
        return;
      }
      // Judged at every send, a resend on a later connection too: the truck may be moving by now.
      const hold = safeStopHold(next, line.fix, { thresholdKmh: this.settings.safeStopKmh, maxFixAgeMs: this.settings.safeStopMaxFixAgeMs });
      line.held = hold !== null;
      if (hold !== null) {
        if (next.status_reason !== hold) await holdCommand(this.db, next.id, hold);
        return;
      }
      if (next.attempts >= next.max_attempts) {
        await this.fail(next, `no answer after ${next.attempts} of ${next.max_attempts} attempts`);
        continue;
      }
      const unsupported = unsupportedReason(link.protocol, next.type);
      if (unsupported) {
        await this.fail(next, `the tracker connected over ${link.protocol}: ${unsupported}`);
        continue;
      }
      const encoder = commandEncoder(link.protocol)!;
      const request: CommandRequest = { type: next.type, params: next.params, ...(next.text === null ? {} : { text: next.text }) };
      const serial = commandSerial(next.id);
      let bytes: Uint8Array;
      try {
        bytes = encoder.encode(request, { deviceId: link.imei, serial, ...(link.said ? { said: link.said } : {}) });
      } catch (error) {
        if (!(error instanceof CommandNotEncodable)) throw error;
        await this.fail(next, error.message);
        continue;
      }
      if (line.closed) return;
      const sent = await markCommandSent(this.db, next.id);
      if (!sent) continue; // cancelled or expired meanwhile
      if (line.closed || !link.write(bytes)) {
        await this.unanswered(sent, 'the connection closed before the command could be written');
        return;
      }
      const timer = setTimeout(() => this.timedOut(line, sent.id), this.settings.answerTimeoutMs);
      timer.unref();
      line.awaiting = { command: sent, serial: encoder.answerSerial?.(request, serial), timer };
      return;
    }
  }

  private async settle(line: DeviceLine, answer: CommandAnswer): Promise<void> {
    const awaited = line.awaiting;
    const matches = awaited && (awaited.serial === undefined || answer.serial === undefined || answer.serial === awaited.serial);
    if (!awaited || !matches) {
      this.log.debug('tracker answer matched no command awaiting one', { deviceId: line.link.deviceId, answer: answer.text, serial: answer.serial });
      return;
    }
    const { command } = awaited;
    if (answer.progress && !answerRefuses(answer.text)) {
      // Under way (a picture being taken): the answer wait starts over for what completes it.
      clearTimeout(awaited.timer);
      awaited.timer = setTimeout(() => this.timedOut(line, command.id), this.settings.answerTimeoutMs);
      awaited.timer.unref();
      this.log.debug('command under way', { commandId: command.id, deviceId: command.device_id, answer: answer.text });
      return;
    }
    clearTimeout(awaited.timer);
    line.awaiting = undefined;
    const settled = answerRefuses(answer.text)
      ? await failCommand(this.db, command.id, 'the tracker refused the command (see response)', answer.text)
      : await acknowledgeCommand(this.db, command.id, answer.text);
    if (settled) this.log.info(`command ${settled.status}`, { commandId: command.id, deviceId: command.device_id, response: answer.text });
    await this.deliverNext(line);
  }

  private timedOut(line: DeviceLine, commandId: string): void {
    if (line.awaiting?.command.id !== commandId) return;
    line.awaiting = undefined;
    const seconds = Math.round(this.settings.answerTimeoutMs / 1000);
    this.run(line, async () => {
      const command = (await nextCommandFor(this.db, line.link.deviceId)) ?? undefined;
      // Its next attempt (or its failure, on the last) is deliverNext's to make.
      if (command?.id === commandId && command.attempts >= command.max_attempts) {
        await this.fail(command, `no answer within ${seconds} s, ${command.attempts} of ${command.max_attempts} attempts`);
      }
      await this.deliverNext(line);
    });
  }

  /** A sent command whose answer can no longer come on this connection. */
  private async unanswered(command: CommandRow, reason: string): Promise<void> {
    if (command.attempts >= command.max_attempts) await this.fail(command, `${reason}, ${command.attempts} of ${command.max_attempts} attempts`);
  }

  private async fail(command: CommandRow, reason: string): Promise<void> {
    const failed = await failCommand(this.db, command.id, reason);
    if (failed) this.log.info('command failed', { commandId: command.id, deviceId: command.device_id, reason });
  }

  /** Connected devices owed a command that nothing is under way for: notifications lost, or a held stop. */
  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const idle = [...this.lines.values()].filter((l) => !l.awaiting && !l.pumpQueued).map((l) => l.link.deviceId);
      for (let i = 0; i < idle.length; i += 5_000) {
        for (const deviceId of await devicesWithOpenCommands(this.db, idle.slice(i, i + 5_000))) this.wake(deviceId);
      }
    } catch (error) {
      this.notice.warn('sweep', 'command sweep failed; trying again', { error: (error as Error).message });
    } finally {
      this.sweeping = false;
    }
  }
}

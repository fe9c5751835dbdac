import type { CommandDelivery, CommandLink } from './commands/command-delivery.ts';
import type { DeviceConnections, TrackerLink } from './device-connections.ts';
import type { DeviceRegistry, RegisteredDevice } from './device-registry.ts';
import type { IngestCounters } from './ingest-counters.ts';
import type { PresenceLog } from './presence-log.ts';
import type { Protocol } from './protocol.ts';
import type { UnidentifiedConnections } from './unidentified-connections.ts';

export interface TrackerIdentityDeps {
  protocol: Protocol;
  registry: DeviceRegistry;
  connections: DeviceConnections;
  presence: PresenceLog;
  counters: IngestCounters;
  unidentified: UnidentifiedConnections;
  /** Gives identified devices their commands; absent, none are sent. */
  commands?: CommandDelivery;
  /** How long the connection has to identify a registered device before it is closed. */
  loginTimeoutMs: number;
}

/** What the identity needs of the connection it belongs to. */
export interface IdentifiedConnection {
  /** The connection's id in the presence log. */
  id: string;
  /** `address:port`, as the refused-login log names it. */
  remote: string;
  /** The peer's address, as the presence log keeps it. */
  remoteAddress: string | null;
  /** The address whose unidentified place the connection holds; undefined when it holds none. */
  place: string | undefined;
  /** What the device has told its decoder of itself (DecoderSession.options), for its commands' encoder. */
  said: Readonly<Record<string, unknown>>;
  /** Writes bytes unless the connection is gone; false when it is. */
  send(bytes: Uint8Array | undefined): boolean;
  /** Ends the connection once what was sent has gone out (a refused login's answer). */
  end(): void;
  /** The connection was closed (login timeout, tracker gone). */
  isClosed(): boolean;
  close(reason: string, fields?: Record<string, unknown>): void;
}

/**
 * Which registered device a tracker connection speaks for, and what follows from it: the device's
 * claim on this connection (a newer one supersedes it), its online and offline presence, and its
 * commands. Until it identifies, the connection holds one of its address's unidentified places and
 * has `loginTimeoutMs` to do so.
 */
export class TrackerIdentity {
  private current: RegisteredDevice | undefined;
  private link: CommandLink | undefined;
  private unidentified: boolean;
  private offlineTold = false;
  private readonly loginTimer: NodeJS.Timeout;
  /** What a newer connection of the same device closes this one through. */
  private readonly trackerLink: TrackerLink;

  constructor(
    private readonly deps: TrackerIdentityDeps,
    private readonly connection: IdentifiedConnection,
  ) {
    this.unidentified = connection.place !== undefined;
    this.trackerLink = { close: (reason) => connection.close(reason) };
    this.loginTimer = setTimeout(() => {
      deps.counters.loginTimeouts++;
      connection.close('no device identified within the login timeout', { loginTimeoutS: deps.loginTimeoutMs / 1000 });
    }, deps.loginTimeoutMs);
  }

  /** The device the connection identified as, if it has. */
  get device(): RegisteredDevice | undefined {
    return this.current;
  }

  /** The device's line to the command delivery, once it identified. */
  get commandLink(): CommandLink | undefined {
    return this.link;
  }

  /**
   * The connection says it is `deviceId`: true once it speaks for that registered device. An unknown
   * device is refused (the protocol's answer, if it has one) and the connection ended.
   */
  async identify(deviceId: string): Promise<boolean> {
    const { protocol, registry, connections, commands } = this.deps;
    const { connection } = this;
    if (this.current?.imei === deviceId) return true;
    const found = await registry.find(deviceId);
    // Closed while the lookup ran (login timeout, tracker gone): nothing may claim the device for it.
    if (connection.isClosed()) return false;
    if (!found) {
      registry.refused(deviceId, protocol.name, connection.remote);
      connection.send(protocol.rejectLogin);
      connection.end();
      return false;
    }
    if (this.current) {
      connections.release(this.current.id, this.trackerLink);
      this.presence('offline', this.current.id, `identified as another device (${found.imei})`);
      if (this.link) commands?.detach(this.link, `identified as another device (${found.imei})`);
    }
    this.current = found;
    this.identifiedOrGone();
    connections.claim(found.id, this.trackerLink);
    this.presence('online', found.id);
    this.link = { deviceId: found.id, imei: deviceId, protocol: protocol.name, said: connection.said, write: (bytes) => connection.send(bytes) };
    commands?.attach(this.link);
    return true;
  }

  /**
   * The connection is done with. Told as soon as it is, not when its socket's 'close' comes: the
   * offline of a connection replaced by a newer one is then told before the newer one's online.
   */
  disconnected(reason: string): void {
    if (!this.current || this.offlineTold) return;
    this.offlineTold = true;
    this.presence('offline', this.current.id, this.deps.presence.shuttingDown ? 'server shutdown' : reason);
    this.deps.connections.release(this.current.id, this.trackerLink);
    if (this.link) this.deps.commands?.detach(this.link, reason);
  }

  /** The connection no longer counts as unidentified: it identified, or it is gone. */
  identifiedOrGone(): void {
    clearTimeout(this.loginTimer);
    if (!this.unidentified) return;
    this.unidentified = false;
    this.deps.unidentified.release(this.connection.place!);
  }

  private presence(kind: 'online' | 'offline', deviceId: number, reason?: string): void {
    const { id: connectionId, remoteAddress } = this.connection;
    this.deps.presence[kind]({ deviceId, connectionId, at: new Date(), protocol: this.deps.protocol.name, remoteAddress, ...(reason ? { reason } : {}) });
  }
}

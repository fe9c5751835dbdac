import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import { credentialsInForce } from '../../db/credentials-in-force.ts';
import { sessionIdsInForce } from '../../db/user-sessions.ts';
import type { Logger } from '../../runtime/logger.ts';
import { ApiError } from '../api-error.ts';
import type { Credential, Principal } from '../app-env.ts';

/** Open streams per credential counted across processes (Redis); each stream holds one lease while open. */
export interface StreamLeases {
  /** Takes `lease` for `credential` if fewer than `limit` leases are held by all processes together. */
  take(credential: string, lease: string, limit: number): Promise<boolean>;
  release(credential: string, lease: string): Promise<void>;
  close(): Promise<void>;
}

export interface OpenStreamsSettings {
  /** EVENT_STREAMS_PER_CREDENTIAL: open streams an API key or access token may hold at once. */
  maxPerCredential: number;
  /** EVENT_STREAM_MAX_LIFE_S: a stream is closed this long after it opened, at the latest. */
  maxLifeMs: number;
  /** How often the credentials of open streams are read again, so a revoked one's streams close. */
  credentialCheckMs: number;
}

/** A stream's place among the open ones: `signal` aborts (with the reason) when the server must close it. */
export interface StreamSlot {
  signal: AbortSignal;
  /** Frees the slot; called once the stream has closed, however it closed. */
  release(): void;
}

interface OpenStream {
  credential: Credential;
  controller: AbortController;
}

/** A client told to retry sooner would only be refused again until one of its streams closes. */
const RETRY_AFTER_S = 10;
const MAX_TIMER_MS = 2_147_483_647;

const credentialKey = (credential: Credential) => (credential.kind === 'api_key' ? `key:${credential.id}` : credential.kind === 'session' ? `session:${credential.id}` : `token:${credential.id}`);
const credentialName = (credential: Credential) => (credential.kind === 'api_key' ? 'API key' : credential.kind === 'session' ? 'session' : 'access token');

/**
 * The event streams this API process holds open: at most `maxPerCredential` per API key or access
 * token (streams opened with a stream token count against the credential that made it), each closed
 * at its maximum life, at its credential's expiry, or within `credentialCheckMs` of the credential's
 * revocation anywhere. The count holds in this process always, and over every process sharing
 * `leases` when there are some (REDIS_URL).
 */
export class OpenStreams {
  private readonly streams = new Set<OpenStream>();
  private readonly perCredential = new Map<string, number>();
  private checker: NodeJS.Timeout | undefined;
  private checking = false;
  private failing = false;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly settings: OpenStreamsSettings,
    private readonly leases?: StreamLeases,
  ) {}

  /** A slot for one more stream of the principal's credential; a 429 when it has as many as it may. */
  async open(principal: Principal): Promise<StreamSlot> {
    const { credential } = principal;
    const key = credentialKey(credential);
    const { maxPerCredential } = this.settings;
    // Counted before anything is awaited, so concurrent opens in this process cannot pass together.
    if ((this.perCredential.get(key) ?? 0) >= maxPerCredential) throw this.tooMany(credential);
    this.count(key, +1);
    const lease = randomUUID();
    const leased = this.leases
      ? await this.leases.take(key, lease, maxPerCredential).catch((error: Error) => {
          // Redis being down should not take streams down with it: this process's own count still holds.
          this.log.warn('event stream leases unavailable; counted in this process only', { error: error.message });
          return undefined;
        })
      : undefined;
    if (leased === false) {
      this.count(key, -1);
      throw this.tooMany(credential);
    }

    const controller = new AbortController();
    const stream: OpenStream = { credential, controller };
    this.streams.add(stream);
    // A little short of the maximum, at random, so streams opened together (after a restart) do not all reconnect together.
    const life = this.settings.maxLifeMs - Math.random() * this.settings.maxLifeMs * 0.1;
    const untilExpiry = principal.expiresAt ? principal.expiresAt.getTime() - Date.now() : Infinity;
    const why = untilExpiry <= life
      ? `the ${credentialName(credential)} expired`
      : `the stream reached its maximum life of ${this.settings.maxLifeMs / 1000} s; reconnect with Last-Event-ID`;
    const timer = setTimeout(() => controller.abort(why), Math.min(MAX_TIMER_MS, Math.max(0, Math.min(life, untilExpiry))));
    timer.unref();
    this.checker ??= setInterval(() => void this.check(), this.settings.credentialCheckMs).unref();

    let released = false;
    return {
      signal: controller.signal,
      release: () => {
        if (released) return;
        released = true;
        clearTimeout(timer);
        this.streams.delete(stream);
        this.count(key, -1);
        if (this.streams.size === 0) {
          clearInterval(this.checker);
          this.checker = undefined;
        }
        if (leased) {
          this.leases!.release(key, lease).catch((error: Error) =>
            this.log.warn('could not release an event stream lease; it runs out by itself', { error: error.message }),
          );
        }
      },
    };
  }

  private count(key: string, delta: number): void {
    const n = (this.perCredential.get(key) ?? 0) + delta;
    if (n > 0) this.perCredential.set(key, n);
    else this.perCredential.delete(key);
  }

  private tooMany(credential: Credential): ApiError {
    return new ApiError(
      429,
      `This ${credentialName(credential)} already has ${this.settings.maxPerCredential} event streams open, the most it may; close one before opening another`,
      { 'Retry-After': String(RETRY_AFTER_S) },
    );
  }

  /** Closes the streams whose credential was revoked or has expired since they opened. */
  private async check(): Promise<void> {
    if (this.checking || this.streams.size === 0) return;
    this.checking = true;
    try {
      const streams = [...this.streams];
      const apiKeyIds = new Set<number>();
      const oauthTokenIds = new Set<string>();
      const sessionIds = new Set<string>();
      for (const { credential } of streams) {
        if (credential.kind === 'api_key') apiKeyIds.add(credential.id);
        else if (credential.kind === 'session') sessionIds.add(credential.id);
        else oauthTokenIds.add(credential.id);
      }
      const inForce = await credentialsInForce(this.db, { apiKeyIds: [...apiKeyIds], oauthTokenIds: [...oauthTokenIds] });
      const sessionsInForce = await sessionIdsInForce(this.db, [...sessionIds]);
      for (const { credential, controller } of streams) {
        const valid = credential.kind === 'api_key'
          ? inForce.apiKeyIds.has(credential.id)
          : credential.kind === 'session' ? sessionsInForce.has(credential.id) : inForce.oauthTokenIds.has(credential.id);
        if (!valid) controller.abort(`the ${credentialName(credential)} was revoked or has expired`);
      }
      if (this.failing) this.log.info('event streams check their credentials again');
      this.failing = false;
    } catch (error) {
      // The streams stay open meanwhile: a database outage should not cut every client off.
      if (!this.failing) this.log.warn('cannot check the credentials of open event streams', { error: (error as Error).message });
      this.failing = true;
    } finally {
      this.checking = false;
    }
  }
}

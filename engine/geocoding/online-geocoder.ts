import { createRequire } from 'node:module';
import type { Logger } from '../../runtime/logger.ts';
import { AddressCache } from '../../domain/geocoding/address-cache.ts';
import { coordinateKey } from '../../domain/geocoding/coordinate-key.ts';
import { isCoordinate } from './offline-geocoder.ts';
import type { OnlineProvider } from './online-providers.ts';
import { RequestPacer } from './request-pacer.ts';
import type { ReverseGeocoder } from './reverse-geocoder.ts';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
/** Nominatim's usage policy requires a User-Agent naming the application; the others accept it. */
export const USER_AGENT = `fleetcore/${version} (reverse geocoding)`;

/** The longest Retry-After a 429 may hold requests back for; beyond it the answers come from offline meanwhile anyway. */
const MAX_RETRY_AFTER_MS = 60_000;

export interface OnlineGeocoderOptions {
  provider: OnlineProvider;
  url: string;
  key?: string;
  timeoutMs: number;
  requestsPerSecond: number;
  cacheSize: number;
  /** Answers whenever the provider cannot: failed, timed out, over its rate, or has nothing for the point. */
  fallback: ReverseGeocoder;
  log: Logger;
}

/** Why a provider's answer could not be used, for the log. */
class ProviderFailure extends Error {
  override readonly name = 'ProviderFailure';
}

/**
 * An online provider behind a cache keyed by the rounded point, a pacer holding it to
 * `requestsPerSecond`, and a timeout; whatever it cannot answer is answered by `fallback`. A
 * failure is logged when a streak of them begins and when the provider answers again, not per request.
 */
export function createOnlineGeocoder(options: OnlineGeocoderOptions): ReverseGeocoder {
  const { provider, fallback, log } = options;
  const cache = new AddressCache(options.cacheSize);
  // A request never waits longer for its turn than it would for the provider's answer.
  const pacer = new RequestPacer(1000 / options.requestsPerSecond, options.timeoutMs);
  const inFlight = new Map<string, Promise<string | null | undefined>>();
  const closing = new AbortController();
  let failing = false;
  let overRate = false;

  /** The provider's answer, or undefined when it gave none usable (already logged). */
  async function ask(latitude: number, longitude: number): Promise<string | null | undefined> {
    let turn: boolean;
    try {
      turn = await pacer.turn(closing.signal);
    } catch {
      return undefined; // closed while waiting
    }
    if (!turn) {
      if (!overRate) log.warn('geocoder: more points than the rate allows; answering from offline meanwhile', { requestsPerSecond: options.requestsPerSecond });
      overRate = true;
      return undefined;
    }
    overRate = false;
    try {
      const address = await fetchAddress(latitude, longitude);
      if (failing) log.info('geocoder: the provider answers again');
      failing = false;
      return address;
    } catch (error) {
      if (closing.signal.aborted) return undefined;
      if (!failing) log.warn('geocoder: the provider failed; answering from offline until it answers again', { err: describe(error) });
      failing = true;
      return undefined;
    }
  }

  async function fetchAddress(latitude: number, longitude: number): Promise<string | null> {
    const { url, headers } = provider.request(options.url, latitude, longitude, options.key);
    const response = await fetch(url, {
      headers: { 'User-Agent': USER_AGENT, Accept: 'application/json', ...headers },
      signal: AbortSignal.any([AbortSignal.timeout(options.timeoutMs), closing.signal]),
    });
    if (!response.ok) {
      await response.body?.cancel();
      if (response.status === 429) pacer.holdFor(retryAfterMs(response.headers.get('retry-after')));
      throw new ProviderFailure(`HTTP ${response.status}`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      if (error instanceof SyntaxError) throw new ProviderFailure('the answer is not JSON');
      throw error;
    }
    return provider.address(body);
  }

  return {
    async reverse(latitude, longitude) {
      if (!isCoordinate(latitude, longitude)) return null;
      const key = coordinateKey(latitude, longitude);
      const cached = cache.get(key);
      if (cached !== undefined) return cached ?? fallback.reverse(latitude, longitude);
      // Points that round alike while one request is out share its answer.
      let pending = inFlight.get(key);
      if (!pending) {
        pending = ask(latitude, longitude)
          .then((answer) => {
            if (answer !== undefined) cache.set(key, answer);
            return answer;
          })
          .finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      const answer = await pending;
      // null: the provider has nothing here (the open sea, a remote track); the nearest place may still say something.
      return answer ?? fallback.reverse(latitude, longitude);
    },
    async ready() {
      await fallback.ready?.();
    },
    async close() {
      closing.abort();
    },
  };
}

/** Retry-After in seconds (the form providers send), at most MAX_RETRY_AFTER_MS; 1 s when absent or unreadable. */
function retryAfterMs(header: string | null): number {
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, MAX_RETRY_AFTER_MS) : 1000;
}

function describe(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'timed out';
  if (!(error instanceof Error)) return String(error);
  // fetch's "fetch failed" says what failed in its cause (ECONNREFUSED, ENOTFOUND).
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  return cause ? `${error.message}: ${String(cause.code ?? cause.message)}` : error.message;
}

import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { DomainError } from '../../domain/domain-error.ts';
import { refusedAddressReason } from './address-policy.ts';

/** A webhook url that may not be registered or called, saying why. */
export class WebhookUrlError extends DomainError {
  override name = 'WebhookUrlError';
  constructor(message: string) {
    super('invalid', message);
  }
}

export interface ResolvedTarget {
  url: URL;
  /** Every address the host resolved to; all were checked. */
  addresses: Array<{ address: string; family: number }>;
}

const MAX_URL_LENGTH = 2048;

/** Parses and checks a webhook URL's form: http(s), a host, no credentials. */
export function parseWebhookUrl(raw: string): URL {
  if (raw.length > MAX_URL_LENGTH) throw new WebhookUrlError(`url must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError(`url "${raw.slice(0, 100)}" is not a valid URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookUrlError(`url must be https:// or http://, not ${url.protocol}//`);
  if (url.username || url.password) throw new WebhookUrlError('url must not carry a user name or password');
  if (!url.hostname) throw new WebhookUrlError('url must name a host');
  return url;
}

/**
 * Resolves a webhook URL's host and checks every address it resolves to; refuses private and
 * reserved ones unless `allowPrivate`. The delivery connects only to the addresses checked here, so a
 * host that resolves differently a moment later (DNS rebinding) cannot slip through.
 */
export async function resolveWebhookTarget(raw: string, options: { allowPrivate: boolean }): Promise<ResolvedTarget> {
  const url = parseWebhookUrl(raw);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (error) {
      throw new WebhookUrlError(`url host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  if (addresses.length === 0) throw new WebhookUrlError(`url host ${host} does not resolve`);
  if (!options.allowPrivate) {
    for (const { address } of addresses) {
      const reason = refusedAddressReason(address);
      if (reason) throw new WebhookUrlError(`url host ${host} resolves to ${address}, which webhooks may not reach: ${reason} (set WEBHOOK_ALLOW_PRIVATE=true to allow it)`);
    }
  }
  return { url, addresses };
}

/** Registration's check: throws a WebhookUrlError saying what is wrong. */
export async function checkWebhookUrl(raw: string, options: { allowPrivate: boolean }): Promise<void> {
  await resolveWebhookTarget(raw, options);
}

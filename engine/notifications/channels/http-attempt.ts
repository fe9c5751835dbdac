/** What an HTTP channel's request came to: an answer (body read up to a cap), or no answer and why. */
export type HttpAttempt =
  | { answered: true; status: number; headers: Headers; body: string }
  | { answered: false; error: string };

const BODY_CAP = 16_384;

/**
 * One request within `timeoutMs` (connect, send, answer and body together). Network errors and
 * timeouts become `answered: false` with a short reason; they never throw. The reason names no URL:
 * a URL may hold a secret (a Telegram bot token is in its path).
 */
export async function httpAttempt(url: string, init: RequestInit, timeoutMs: number): Promise<HttpAttempt> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    return { answered: true, status: response.status, headers: response.headers, body: await readCapped(response) };
  } catch (error) {
    return { answered: false, error: networkError(error, timeoutMs) };
  }
}

async function readCapped(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    if (size >= BODY_CAP) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, BODY_CAP).toString('utf8');
}

function networkError(error: unknown, timeoutMs: number): string {
  const err = error as Error & { cause?: Error & { code?: string } };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `timed out after ${timeoutMs} ms`;
  const cause = err.cause;
  if (cause) return cause.code ? `${cause.code}: ${cause.message}` : cause.message;
  return err.message;
}

/** Retry-After in ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The start of an answer's body on one line, for a delivery's error. */
export function excerpt(body: string, max = 200): string {
  const line = body.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

import { EventSource } from 'eventsource';

/**
 * `GET /api/v1/events/stream?types=…` as an EventSource client with the key's bearer header,
 * resolved once the server has opened it (rejected with the stream's error otherwise).
 */
export async function openEventStream(baseUrl: string, key: string, types: string): Promise<EventSource> {
  const source = new EventSource(`${baseUrl.replace(/\/+$/, '')}/api/v1/events/stream?types=${types}`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${key}` } }),
  });
  await new Promise<void>((resolve, reject) => {
    source.addEventListener('open', () => resolve(), { once: true });
    source.addEventListener('error', (e) => {
      source.close();
      reject(new Error(`stream: ${(e as { message?: string }).message}`));
    }, { once: true });
  });
  return source;
}

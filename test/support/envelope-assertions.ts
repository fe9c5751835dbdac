import { expect } from 'vitest';

/** An error envelope: success false, data null, a non-empty error (matching `error` if given), an ISO timestamp of now. */
export function expectErrorEnvelope(body: any, error?: string | RegExp) {
  expect(Object.keys(body).sort()).toEqual(['data', 'error', 'success', 'timestamp']);
  expect(body.success).toBe(false);
  expect(body.data).toBeNull();
  expect(typeof body.error).toBe('string');
  expect(body.error.length).toBeGreaterThan(0);
  if (typeof error === 'string') expect(body.error).toBe(error);
  else if (error) expect(body.error).toMatch(error);
  expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
  expect(Math.abs(Date.parse(body.timestamp) - Date.now())).toBeLessThan(60_000);
}

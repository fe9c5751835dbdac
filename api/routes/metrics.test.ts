import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../runtime/logger.ts';
import { metricsRoutes } from './metrics.ts';

const scrape = async () => ({ contentType: 'text/plain; version=0.0.4; charset=utf-8', text: '# TYPE up gauge\nup 1\n' });

describe('GET /metrics', () => {
  it('is open without METRICS_TOKEN', async () => {
    const response = await metricsRoutes(silentLogger, { scrape }).request('/metrics');
    expect([response.status, await response.text()]).toEqual([200, '# TYPE up gauge\nup 1\n']);
  });

  it('asks for the bearer token of METRICS_TOKEN, and refuses any other', async () => {
    const app = metricsRoutes(silentLogger, { scrape, token: 'scrape-token-0123456789' });
    for (const authorization of [undefined, 'Bearer wrong', 'Bearer scrape-token-012345678', 'Basic scrape-token-0123456789']) {
      const response = await app.request('/metrics', { headers: authorization ? { Authorization: authorization } : {} });
      expect(response.status, authorization).toBe(401);
      expect(response.headers.get('WWW-Authenticate')).toBe('Bearer realm="metrics"');
    }
    const response = await app.request('/metrics', { headers: { Authorization: 'Bearer scrape-token-0123456789' } });
    expect([response.status, await response.text()]).toEqual([200, '# TYPE up gauge\nup 1\n']);
  });

  it('answers 503 when the metrics cannot be gathered (a cluster primary not answering)', async () => {
    const failing = async () => Promise.reject(new Error('the cluster primary did not answer with the metrics in 5 s'));
    const response = await metricsRoutes(silentLogger, { scrape: failing }).request('/metrics');
    expect(response.status).toBe(503);
    expect(await response.text()).toMatch(/did not answer/);
  });
});

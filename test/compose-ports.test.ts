import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TRACKER_PROTOCOLS } from '../ingest/protocol-catalog.ts';

const compose = readFileSync(resolve(import.meta.dirname, '..', 'docker-compose.yml'), 'utf8');
/** The host:container pairs the compose file publishes. */
const published = new Set([...compose.matchAll(/^\s*-\s*"(\d+):(\d+)"/gm)].map((m) => `${m[1]}:${m[2]}`));

describe('docker-compose.yml', () => {
  it('publishes every tracker protocol on its usual port, so trackers reach the container as installers set them up', () => {
    const missing = TRACKER_PROTOCOLS.map(({ protocol }) => `${protocol.defaultPort}:${protocol.defaultPort}`).filter((pair) => !published.has(pair));
    expect(missing).toEqual([]);
  });
});

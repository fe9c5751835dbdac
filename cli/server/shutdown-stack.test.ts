import { describe, expect, it } from 'vitest';
import { createLogger } from '../../runtime/logger.ts';
import { ShutdownStack } from './shutdown-stack.ts';

function recorded() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, log: createLogger('info', (line) => lines.push(JSON.parse(line))) };
}

describe('ShutdownStack', () => {
  it('stops parts in reverse order, going on past one that fails', async () => {
    const { lines, log } = recorded();
    const stack = new ShutdownStack(log);
    const stopped: string[] = [];
    stack.push('database', () => void stopped.push('database'));
    stack.push('queues', () => Promise.reject(new Error('connection lost')));
    stack.push('api', async () => void stopped.push('api'));
    await stack.stopAll();
    expect(stopped).toEqual(['api', 'database']);
    expect(lines).toMatchObject([{ msg: 'could not stop cleanly', part: 'queues', error: 'connection lost' }]);
  });

  it('leaves a part that never stops behind after its deadline, and still stops the rest', async () => {
    const { lines, log } = recorded();
    const stack = new ShutdownStack(log, 50);
    const stopped: string[] = [];
    stack.push('database', () => void stopped.push('database'));
    stack.push('queues', () => new Promise<void>(() => {}));
    await stack.stopAll();
    expect(stopped).toEqual(['database']);
    expect(lines).toMatchObject([{ level: 'error', msg: 'did not stop in time; stopping the rest without it', part: 'queues', timeoutMs: 50 }]);
  });

  it('throws nothing from a stop that throws synchronously', async () => {
    const { lines, log } = recorded();
    const stack = new ShutdownStack(log);
    stack.push('metrics', () => {
      throw new Error('already closed');
    });
    await expect(stack.stopAll()).resolves.toBeUndefined();
    expect(lines[0]).toMatchObject({ part: 'metrics', error: 'already closed' });
  });
});

describe('ShutdownStack with several parts hanging', () => {
  it('shares one budget between them, each still getting a last moment', async () => {
    const { lines, log } = recorded();
    const stack = new ShutdownStack(log, 400, 500);
    const stopped: string[] = [];
    stack.push('database', () => new Promise<void>((done) => setTimeout(() => done(stopped.push('database') as unknown as void), 50)));
    stack.push('redis', () => new Promise<void>(() => {}));
    stack.push('queues', () => new Promise<void>(() => {}));
    const started = Date.now();
    await stack.stopAll();
    const took = Date.now() - started;
    // The first takes its part's 400 ms, leaving 100 of the 500: the next ones get the last 250 ms each.
    expect(lines.map((l) => [l.part, l.timeoutMs])).toEqual([['queues', 400], ['redis', 250]]);
    expect(stopped).toEqual(['database']);
    expect(took).toBeLessThan(1_000);
  });
});

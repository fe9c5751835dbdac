import { describe, expect, it } from 'vitest';
import { DeviceSignals, type SignalledQueues } from './device-signals.ts';

/** Two queues by parity whose sends fail while `refusing` is above zero (a Redis master failing over). */
function flakyQueues(refusing: number) {
  const sent: Array<{ index: number; deviceIds: number[] }> = [];
  const errors: string[] = [];
  const queues: SignalledQueues = {
    count: 2,
    indexOf: (id) => id % 2,
    async signalQueue(index, deviceIds) {
      if (refusing > 0) {
        refusing--;
        throw new Error('CLUSTERDOWN The cluster is down');
      }
      sent.push({ index, deviceIds: [...deviceIds].sort() });
    },
  };
  return { queues, sent, errors, onError: (error: Error) => errors.push(error.message) };
}

const until = async (done: () => boolean, ms = 2_000) => {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('DeviceSignals when a send fails', () => {
  it('sends the same devices again after the retry delay, with what arrived meanwhile', async () => {
    const flaky = flakyQueues(1);
    const signals = new DeviceSignals(flaky.queues, flaky.onError, 5, 2000, 50);
    signals.add([2, 4]);
    await until(() => flaky.errors.length === 1);
    signals.add([6]);
    await until(() => flaky.sent.length === 1);
    expect(flaky.sent).toEqual([{ index: 0, deviceIds: [2, 4, 6] }]);
    expect(flaky.errors).toEqual(['CLUSTERDOWN The cluster is down']);
    await signals.close();
  });

  it('keeps trying while the queue refuses, and gives up only at shutdown', async () => {
    const flaky = flakyQueues(3);
    const signals = new DeviceSignals(flaky.queues, flaky.onError, 5, 2000, 20);
    signals.add([1]);
    await until(() => flaky.sent.length === 1);
    expect(flaky.errors).toHaveLength(3);
    expect(flaky.sent).toEqual([{ index: 1, deviceIds: [1] }]);

    const down = flakyQueues(Number.POSITIVE_INFINITY);
    const closing = new DeviceSignals(down.queues, down.onError, 60_000, 2000, 20);
    closing.add([3]);
    await closing.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(down.errors).toHaveLength(1); // one try at shutdown, no retry timer left behind
  });
});

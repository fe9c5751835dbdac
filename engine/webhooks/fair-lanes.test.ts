import { describe, expect, it } from 'vitest';
import { FairLanes, type FairLaneLimits } from './fair-lanes.ts';

interface Item { accountId: number; webhookId: number; n: number }

const LIMITS: FairLaneLimits = { concurrency: 4, perAccount: 2, perWebhook: 16, holdPerAccount: 8, holdTotal: 32, maxWaitMs: 25_000 };

function lanes(limits: Partial<FairLaneLimits> = {}, clock = { now: 0 }) {
  const l = new FairLanes<Item>({ ...LIMITS, ...limits }, () => clock.now);
  let n = 0;
  const add = (accountId: number, webhookId: number, count = 1) => {
    for (let i = 0; i < count; i++) l.add({ accountId, webhookId, n: ++n });
  };
  const startAll = () => {
    const started: Item[] = [];
    for (let item = l.next(); item; item = l.next()) started.push(item);
    return started;
  };
  return { l, add, startAll };
}

describe('fair lanes of webhook deliveries', () => {
  it('keeps an account to its share of the slots, leaving the rest to other accounts', () => {
    const { l, add, startAll } = lanes();
    add(1, 10, 5);
    add(1, 11, 5);
    expect(startAll().map((i) => i.accountId)).toEqual([1, 1]);
    add(2, 20);
    expect(startAll().map((i) => i.accountId)).toEqual([2]);
    expect(l.active).toBe(3);
    expect(l.waiting).toBe(8);
  });

  it('gives a freed slot to the account served longest ago, not to the one whose request ended', () => {
    const { l, add, startAll } = lanes({ concurrency: 2, perAccount: 3 });
    add(1, 10, 6);
    const [a1] = startAll();
    add(2, 20, 3);
    add(3, 30, 3);
    l.done(a1!);
    // Accounts 2 and 3 have not been served: they go before account 1's next.
    expect(startAll().map((i) => i.accountId)).toEqual([2]);
    // With one slot turning over, the accounts take turns.
    const order: number[] = [];
    const { l: l2, add: add2 } = lanes({ concurrency: 1, perAccount: 1 });
    add2(1, 10, 3);
    add2(2, 20, 3);
    add2(3, 30, 3);
    for (let i = 0; i < 9; i++) {
      const item = l2.next()!;
      order.push(item.accountId);
      l2.done(item);
    }
    expect(order).toEqual([1, 2, 3, 1, 2, 3, 1, 2, 3]);
  });

  it('leaves an account\'s other webhooks a slot when one of them is stuck', () => {
    const { l, add, startAll } = lanes({ concurrency: 6, perAccount: 3, perWebhook: 16 });
    add(1, 10, 10);
    expect(startAll().map((i) => i.webhookId)).toEqual([10, 10]);
    add(1, 11, 2);
    expect(startAll().map((i) => i.webhookId)).toEqual([11]);
    expect(l.active).toBe(3);
    // Webhooks of one account take turns too.
    const { l: l2, add: add2 } = lanes({ concurrency: 1, perAccount: 2 });
    add2(1, 10, 2);
    add2(1, 11, 2);
    const order: number[] = [];
    for (let i = 0; i < 4; i++) {
      const item = l2.next()!;
      order.push(item.webhookId);
      l2.done(item);
    }
    expect(order).toEqual([10, 11, 10, 11]);
  });

  it('lends slots no account within its share wants, always leaving a share free for another account', () => {
    const { l, add, startAll } = lanes({ concurrency: 10, perAccount: 2, perWebhook: 16 });
    add(1, 10, 20);
    add(1, 11, 20);
    // Within its share a webhook has all of its account's slots but one. Slots are lent to a webhook
    // once it has answered fast...
    const firsts = startAll();
    expect(firsts.map((i) => i.webhookId)).toEqual([10, 11]);
    expect(startAll()).toEqual([]);
    for (const item of firsts) l.done(item);
    // ...up to what its account may borrow (10 less a share kept free), leaving one for the other webhook.
    const borrowed = startAll();
    expect(borrowed).toHaveLength(8);
    expect(l.active).toBe(8);
    // Another account finds its share free at once.
    add(2, 20, 5);
    add(2, 21, 5);
    const second = startAll();
    expect(second.map((i) => i.accountId)).toEqual([2, 2]);
    // Every slot is taken. A slot the borrower frees is not lent again while it would leave less than a share free...
    l.done(borrowed[0]!);
    expect(startAll()).toEqual([]);
    // ...and a slot of an account within its share goes back to that account.
    l.done(second[0]!);
    expect(startAll().map((i) => i.accountId)).toEqual([2]);
  });

  it('lends no slot to a webhook whose last answer was slow', () => {
    const clock = { now: 0 };
    const { l, add, startAll } = lanes({ concurrency: 10, perAccount: 3, perWebhook: 16 }, clock);
    add(1, 10, 20);
    const [first, second] = startAll();
    expect(l.active).toBe(2);
    clock.now = 5_000;
    l.done(first!);
    const [third] = startAll();
    expect(l.active).toBe(2);
    // Fast again: lent slots, up to its account's 7 but one.
    l.done(third!);
    expect(startAll()).toHaveLength(5);
    expect(l.active).toBe(6);
    expect(second).toBeDefined();
  });

  it('lends nothing when the slots beyond a share are no more than a share', () => {
    const { l, add, startAll } = lanes({ concurrency: 4, perAccount: 2, perWebhook: 16 });
    add(1, 10, 3);
    add(1, 11, 3);
    expect(startAll()).toHaveLength(2);
    expect(l.active).toBe(2);
  });

  it('counts the room an account has left, and the room in all', () => {
    const { l, add, startAll } = lanes({ holdPerAccount: 4, holdTotal: 6 });
    add(1, 10, 3);
    startAll();
    expect(l.room(1)).toBe(1);
    expect(l.room(2)).toBe(4);
    expect(l.rooms()).toEqual({ accounts: { 1: 1 }, others: 4, total: 3 });
    add(1, 10, 5);
    expect(l.room(1)).toBe(0);
    expect(l.rooms().total).toBe(0);
  });

  it('sets aside a delivery that waited until its claim is nearly out, instead of starting it', () => {
    const clock = { now: 0 };
    const { l, add, startAll } = lanes({ concurrency: 1, perAccount: 1, maxWaitMs: 1_000 }, clock);
    add(1, 10, 3);
    const [first] = startAll();
    clock.now = 500;
    add(2, 20);
    clock.now = 1_200;
    l.done(first!);
    // Account 2's delivery is fresh; account 1's two waited too long.
    expect(startAll().map((i) => i.accountId)).toEqual([2]);
    expect(l.takeStale().map((i) => i.n)).toEqual([2, 3]);
    expect(l.waiting).toBe(0);
    expect(l.takeStale()).toEqual([]);
  });

  it('hands back everything waiting when the process stops', () => {
    const { l, add, startAll } = lanes({ perAccount: 3 });
    add(1, 10, 4);
    add(2, 20, 1);
    startAll();
    expect(l.takeWaiting().map((i) => i.n).sort()).toEqual([3, 4]);
    expect(l.waiting).toBe(0);
    expect(l.next()).toBeUndefined();
  });
});

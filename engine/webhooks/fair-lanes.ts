export interface FairLaneLimits {
  /** Requests in flight at once in this process. */
  concurrency: number;
  /** Requests of one account in flight at once as of right (more with lent slots, see FairLanes). */
  perAccount: number;
  /** Requests of one webhook in flight at once (kept below its account's, see FairLanes). */
  perWebhook: number;
  /** Deliveries of one account this process holds at once, in flight and waiting. */
  holdPerAccount: number;
  /** Deliveries this process holds at once, in flight and waiting. */
  holdTotal: number;
  /** A delivery that waited longer is set aside, never started: its claim would run out during the request. */
  maxWaitMs: number;
}

interface Turn {
  /** When it was last served (a running count); 0 for never, so a newcomer goes first. */
  servedAt: number;
}

interface WebhookLane<T> extends Turn {
  active: number;
  waiting: Array<{ item: T; since: number }>;
  /** Its last request was answered within FAST_ANSWER_MS: it may be lent slots. */
  fast: boolean;
}

/**
 * Only a webhook whose last request was answered this fast is lent slots. Lent slots come back as the
 * borrower's requests end, so a receiver that hangs must not hold them: it keeps to its share, and an
 * account arriving later finds its slots free within about this long.
 */
const FAST_ANSWER_MS = 1_000;

interface AccountLane<T> extends Turn {
  active: number;
  waiting: number;
  webhooks: Map<number, WebhookLane<T>>;
}

/**
 * Which claimed webhook delivery this process sends next: fair across accounts first, then across
 * each account's webhooks. An account has `perAccount` requests in flight as of right, so accounts
 * whose receivers are slow cannot take every slot; and a free slot goes to the account served longest
 * ago that may send, not to the one whose request just ended, so accounts take turns. Within an
 * account a webhook may take all of its account's slots but one, so one dead receiver leaves its
 * account's other webhooks a way through.
 *
 * Slots no account within its share wants are lent, to webhooks whose receivers answer fast: an
 * account past its share may start more while at least `perAccount` slots stay free after it, so a
 * lone busy account uses most of the process (a receiver's throughput is its requests in flight over
 * its answer time) while any other account still finds a share's worth of slots free at once, and
 * takes the slots that free before any account borrows again. No I/O and no timers: the caller claims, sends and releases.
 */
export class FairLanes<T extends { accountId: number; webhookId: number }> {
  private readonly accounts = new Map<number, AccountLane<T>>();
  private readonly stale: T[] = [];
  private readonly startedAt = new WeakMap<T, number>();
  private readonly perWebhook: number;
  /** Slots kept free when lending, for accounts within their share. */
  private readonly reserve: number;
  /** In flight of one account, and of one of its webhooks, with borrowed slots. */
  private readonly borrowingAccountMax: number;
  private readonly borrowingWebhookMax: number;
  private activeCount = 0;
  private waitingCount = 0;
  private turn = 0;

  constructor(
    private readonly limits: FairLaneLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.perWebhook = Math.max(1, Math.min(limits.perWebhook, limits.perAccount - 1));
    this.reserve = limits.perAccount;
    this.borrowingAccountMax = Math.max(limits.perAccount, limits.concurrency - this.reserve);
    this.borrowingWebhookMax = Math.max(this.perWebhook, Math.min(limits.perWebhook, this.borrowingAccountMax - 1));
  }

  get active(): number {
    return this.activeCount;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /** Queues a claimed delivery behind its webhook's others. */
  add(item: T): void {
    let account = this.accounts.get(item.accountId);
    if (!account) this.accounts.set(item.accountId, (account = { active: 0, waiting: 0, servedAt: 0, webhooks: new Map() }));
    let lane = account.webhooks.get(item.webhookId);
    if (!lane) account.webhooks.set(item.webhookId, (lane = { active: 0, waiting: [], servedAt: 0, fast: false }));
    lane.waiting.push({ item, since: this.now() });
    account.waiting++;
    this.waitingCount++;
  }

  /** The delivery to start now, counted in flight until `done`; undefined when none may start. */
  next(): T | undefined {
    const staleBefore = this.now() - this.limits.maxWaitMs;
    while (this.activeCount < this.limits.concurrency) {
      const pick = this.inTurn(this.limits.perAccount, this.perWebhook)
        ?? (this.limits.concurrency - this.activeCount > this.reserve ? this.inTurn(this.borrowingAccountMax, this.borrowingWebhookMax, true) : undefined);
      if (!pick) return undefined;
      const [account, lane] = pick;
      const entry = lane.waiting.shift()!;
      account.waiting--;
      this.waitingCount--;
      if (entry.since < staleBefore) {
        this.stale.push(entry.item);
        this.forgetIfIdle(entry.item, account, lane);
        continue;
      }
      lane.active++;
      account.active++;
      this.startedAt.set(entry.item, this.now());
      this.activeCount++;
      lane.servedAt = account.servedAt = ++this.turn;
      return entry.item;
    }
    return undefined;
  }

  /** A delivery's request ended: its slot is free. */
  done(item: T): void {
    const account = this.accounts.get(item.accountId);
    const lane = account?.webhooks.get(item.webhookId);
    if (!account || !lane) return;
    lane.active--;
    account.active--;
    lane.fast = this.now() - (this.startedAt.get(item) ?? -Infinity) <= FAST_ANSWER_MS;
    this.activeCount--;
    this.forgetIfIdle(item, account, lane);
  }

  /** How many more deliveries of the account this process may hold. */
  room(accountId: number): number {
    const account = this.accounts.get(accountId);
    return account ? Math.max(0, this.limits.holdPerAccount - account.active - account.waiting) : this.limits.holdPerAccount;
  }

  /** Room per account held now, the room of any other account, and the room left in all. */
  rooms(): { accounts: Record<number, number>; others: number; total: number } {
    const accounts: Record<number, number> = {};
    for (const id of this.accounts.keys()) accounts[id] = this.room(id);
    return { accounts, others: this.limits.holdPerAccount, total: Math.max(0, this.limits.holdTotal - this.activeCount - this.waitingCount) };
  }

  /** Deliveries that waited too long (set aside by `next`, and any others by now): theirs to release. */
  takeStale(): T[] {
    const staleBefore = this.now() - this.limits.maxWaitMs;
    for (const account of this.accounts.values()) {
      for (const lane of account.webhooks.values()) {
        // Each lane is in arrival order: the stale ones are at its front.
        while (lane.waiting.length > 0 && lane.waiting[0]!.since < staleBefore) {
          const { item } = lane.waiting.shift()!;
          account.waiting--;
          this.waitingCount--;
          this.stale.push(item);
          this.forgetIfIdle(item, account, lane);
        }
      }
    }
    return this.stale.splice(0);
  }

  /** Every waiting delivery, taken out (the process is stopping). */
  takeWaiting(): T[] {
    const all = this.stale.splice(0);
    for (const account of this.accounts.values()) {
      for (const lane of account.webhooks.values()) all.push(...lane.waiting.splice(0).map((w) => w.item));
      this.waitingCount -= account.waiting;
      account.waiting = 0;
    }
    return all;
  }

  /** The account served longest ago with a webhook that may start a request under these limits, and that webhook. */
  private inTurn(accountMax: number, webhookMax: number, lending = false): [AccountLane<T>, WebhookLane<T>] | undefined {
    let pick: [AccountLane<T>, WebhookLane<T>] | undefined;
    for (const account of this.accounts.values()) {
      if (account.waiting === 0 || account.active >= accountMax) continue;
      if (pick && account.servedAt >= pick[0].servedAt) continue;
      const lane = this.laneInTurn(account, webhookMax, lending);
      if (lane) pick = [account, lane];
    }
    return pick;
  }

  /** The account's webhook served longest ago that may start a request, if any. */
  private laneInTurn(account: AccountLane<T>, webhookMax: number, lending: boolean): WebhookLane<T> | undefined {
    let best: WebhookLane<T> | undefined;
    for (const lane of account.webhooks.values()) {
      if (lending && !lane.fast) continue;
      if (lane.waiting.length > 0 && lane.active < webhookMax && (!best || lane.servedAt < best.servedAt)) best = lane;
    }
    return best;
  }

  private forgetIfIdle(item: T, account: AccountLane<T>, lane: WebhookLane<T>): void {
    if (lane.active === 0 && lane.waiting.length === 0) account.webhooks.delete(item.webhookId);
    if (account.active === 0 && account.waiting === 0) this.accounts.delete(item.accountId);
  }
}

/**
 * Values read from the database and reused while they are young: one read per key per `refreshMs`
 * however many requests ask, and never a value older than `maxAgeMs` (counted from when its read
 * started). Between the two, the current value is served while one refresh runs in the background;
 * past `maxAgeMs` a request waits for the fresh read. Concurrent misses share one read. At most
 * `maxEntries` keys are kept (the least recently used go first); a failed read is not kept.
 */
export class FreshCache<K, V> {
  private readonly entries = new Map<K, { value: V; readAt: number }>();
  private readonly reading = new Map<K, Promise<V>>();
  /** Moved by clear(): a read started before it answers its own caller but is not kept. */
  private generation = 0;

  constructor(
    private readonly options: {
      refreshMs: number; maxAgeMs: number; maxEntries: number;
      /** Whether a value read is kept (default: all are); one not kept is read again by the next request. */
      keep?: (value: V) => boolean;
    },
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    if (!(options.refreshMs <= options.maxAgeMs)) throw new Error('refreshMs must not exceed maxAgeMs');
  }

  async get(key: K, read: () => Promise<V>): Promise<V> {
    const entry = this.entries.get(key);
    const age = entry ? this.now() - entry.readAt : Number.POSITIVE_INFINITY;
    if (entry && age < this.options.refreshMs) return entry.value;
    const refresh = this.refresh(key, read);
    if (entry && age < this.options.maxAgeMs) {
      // Served now; the refresh's failure shows on the request that must wait for it.
      refresh.catch(() => undefined);
      return entry.value;
    }
    return refresh;
  }

  /** Forgets every value: the next request of each key reads again (a read already running is not reused). */
  clear(): void {
    this.generation++;
    this.entries.clear();
    this.reading.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private refresh(key: K, read: () => Promise<V>): Promise<V> {
    const running = this.reading.get(key);
    if (running) return running;
    const readAt = this.now();
    const generation = this.generation;
    const reading = read()
      .then((value) => {
        if (generation !== this.generation || (this.options.keep && !this.options.keep(value))) return value;
        this.entries.delete(key);
        this.entries.set(key, { value, readAt });
        if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
        return value;
      })
      .finally(() => {
        if (this.reading.get(key) === reading) this.reading.delete(key);
      });
    this.reading.set(key, reading);
    return reading;
  }
}

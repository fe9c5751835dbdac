/**
 * The answers of an online provider by rounded point (coordinateKey), least recently used first
 * out once `capacity` is reached. A Map keeps insertion order, so moving an entry to the end on
 * each read makes its first key the least recently used.
 */
export class AddressCache {
  private readonly entries = new Map<string, string | null>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The cached answer (null is an answer: nothing there), or undefined when not cached. */
  get(key: string): string | null | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: string | null): void {
    if (this.capacity <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}

import type { FeedFix, PositionFeed } from '../../domain/events/position-feed.ts';

/** The position feed within one process: each committed batch handed to every listener at once. */
export class LocalPositionFeed implements PositionFeed {
  private readonly listeners = new Set<(fixes: readonly FeedFix[]) => void>();

  constructor(private readonly failed: (error: Error) => void = () => undefined) {}

  get subscribers(): number {
    return this.listeners.size;
  }

  wanted(): boolean {
    return this.listeners.size > 0;
  }

  publish(fixes: readonly FeedFix[]): void {
    if (fixes.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(fixes);
      } catch (error) {
        // One listener's bug must not stop the others, nor the commit that published.
        this.failed(error as Error);
      }
    }
  }

  subscribe(listener: (fixes: readonly FeedFix[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

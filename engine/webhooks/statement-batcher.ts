/**
 * Gathers calls made within a few milliseconds into one call of `run` with all their inputs, and
 * hands each caller its own result. Many deliveries in flight then cost one claim statement and one
 * record statement per batch instead of one each, which is what lets webhooks keep up on a database
 * that runs one statement at a time (the embedded one) while the engine writes.
 */
export class StatementBatcher<In, Out> {
  private pending: Array<{ input: In; resolve: (out: Out) => void; reject: (error: unknown) => void }> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly run: (inputs: In[]) => Promise<Out[]>,
    private readonly options: { maxDelayMs: number; maxItems: number },
  ) {}

  call(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length >= this.options.maxItems) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.maxDelayMs);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    this.run(batch.map((b) => b.input)).then(
      (outs) => batch.forEach((b, i) => b.resolve(outs[i]!)),
      (error) => batch.forEach((b) => b.reject(error)),
    );
  }
}

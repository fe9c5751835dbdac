/** Reads until `check` stops throwing, or rethrows its last failure after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, check: (value: T) => void, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    try {
      check(value);
      return value;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

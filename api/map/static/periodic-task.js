// A task run now and then every `intervalMs`, one run at a time, and at once on demand.

/**
 * Runs `task` now, then `intervalMs` after each run ends (never two runs at once). A run that throws
 * an error with `retryAfterS` (a 429) waits at least that long. `runNow()` brings the next run forward;
 * asked during a run, it runs once more right after.
 */
export function periodicTask(intervalMs, task) {
  let timer;
  let running = false;
  let again = false;
  let stopped = false;

  async function run() {
    clearTimeout(timer);
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    let backoffMs = 0;
    try {
      await task();
    } catch (error) {
      backoffMs = (error?.retryAfterS ?? 0) * 1000;
    }
    running = false;
    if (stopped) return;
    const wait = again ? backoffMs : Math.max(intervalMs, backoffMs);
    again = false;
    timer = setTimeout(run, wait);
  }

  void run();
  return {
    runNow: () => void run(),
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

// Preloaded (`node --expose-gc --import ./bench/memory-probe.js cli/fleet.js serve`) only by
// `bench memory`: over the IPC channel the bench spawned the server with, "memory" answers with the
// process's memory after a full garbage collection, so heap figures hold live objects only.
if (process.send) {
  process.on('message', (message) => {
    if (message !== 'memory') return;
    globalThis.gc?.();
    globalThis.gc?.();
    process.send({ ...process.memoryUsage(), collected: typeof globalThis.gc === 'function' });
  });
  process.channel?.unref(); // the channel must not keep a stopping server alive
}

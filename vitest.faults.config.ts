import { defineConfig } from 'vitest/config';

// `npm run test:faults`: the fault suite alone (test/faults/), on the real servers of DATABASE_URL and a
// redis-server of its own. Its runs take minutes and each drives three processes, so one at a time.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});

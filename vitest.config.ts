import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    // test/faults runs on its own (npm run test:faults): minutes of processes killed and servers restarted.
    exclude: ['node_modules/**', 'data/**', 'bench/**', 'test/faults/**'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Each test file opens its own database; two at a time suits a 2-core machine.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});

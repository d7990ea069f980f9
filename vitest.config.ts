import { defineConfig } from 'vitest/config';

// One root run over every package, so CI reads a single summary line.
export default defineConfig({
  test: {
    // Fails the run if a test leaves a server process listening.
    globalSetup: ['./test-support/listener-check.ts'],
    // @verikit/redis runs its Redis suites a second time, on ioredis 6 and BullMQ 6.
    projects: ['packages/*', 'apps/*', 'recipes/*', 'tests/*', 'packages/redis/vitest.v6.config.ts'],
  },
});

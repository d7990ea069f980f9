import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'cli',
    include: ['test/**/*.test.ts'],
    // Each case runs the real bin as a child process (a Node start and an import of the engine) on a shared, busy machine.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});

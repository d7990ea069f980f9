import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'recipe-prometheus',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
  },
});

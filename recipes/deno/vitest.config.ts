import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'recipe-deno',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
  },
});

import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'recipe-nextjs',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 240_000,
  },
});

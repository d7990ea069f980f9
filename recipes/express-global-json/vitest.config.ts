import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'recipe-express-global-json',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
  },
});

import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'consumer',
    include: ['*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});

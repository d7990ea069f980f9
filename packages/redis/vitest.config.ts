import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'redis',
    include: ['test/**/*.test.ts'],
    env: { VERIKIT_REDIS_MAJOR: '5' },
    testTimeout: 30_000,
  },
});

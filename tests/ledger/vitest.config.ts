import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'ledger',
    include: ['*.test.ts'],
    testTimeout: 60_000,
  },
});

import { defineProject } from 'vitest/config';

// The suites that use ioredis and BullMQ again, on their current majors: every `ioredis` and `bullmq`
// import (src and tests) resolves to ioredis 6 and BullMQ 6, installed beside 5 as npm aliases.
// BullMQ 6 loads ioredis only to open connections from options; verikit always hands it a client.
export default defineProject({
  resolve: {
    alias: [
      { find: /^ioredis(?=$|\/)/, replacement: 'ioredis-6' },
      { find: /^bullmq(?=$|\/)/, replacement: 'bullmq-6' },
    ],
  },
  test: {
    name: 'redis (ioredis 6 + BullMQ 6)',
    include: [
      'test/majors.test.ts',
      'test/store.test.ts',
      'test/inbox.test.ts',
      'test/inbox-admin.test.ts',
      'test/reseal-race.test.ts',
      'test/job-id.test.ts',
      'test/refused-writes.test.ts',
      'test/health.test.ts',
      'test/ledger.test.ts',
      'test/cluster-store.test.ts',
      'test/cluster-inbox.test.ts',
      'test/cluster-ledger.test.ts',
    ],
    env: { VERIKIT_REDIS_MAJOR: '6' },
    testTimeout: 30_000,
  },
});

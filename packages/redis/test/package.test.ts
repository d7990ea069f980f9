import { publishedPackageSuite } from '../../../test-support/package-checks.js';
import * as redis from '../src/index.js';

publishedPackageSuite(new URL('..', import.meta.url), {
  exports: redis,
  entryPoints: ['createRedisStore', 'createRedisInbox', 'createRedisLedger'],
});

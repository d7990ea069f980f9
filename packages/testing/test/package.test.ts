import { publishedPackageSuite } from '../../../test-support/package-checks.js';
import * as kit from '../src/index.js';

publishedPackageSuite(new URL('..', import.meta.url), { exports: kit, entryPoints: ['createFakeService', 'idempotencyStoreContract'] });

import { publishedPackageSuite } from '../../../test-support/package-checks.js';
import * as store from '../src/index.js';

publishedPackageSuite(new URL('..', import.meta.url), { exports: store, entryPoints: ['createPostgresStore'] });

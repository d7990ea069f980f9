import { publishedPackageSuite } from '../../../test-support/package-checks.js';
import * as adapter from '../src/index.js';

publishedPackageSuite(new URL('..', import.meta.url), { exports: adapter, entryPoints: ['verikitRouter'] });

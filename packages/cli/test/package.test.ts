import { publishedPackageSuite } from '../../../test-support/package-checks.js';
import * as cli from '../src/index.js';

publishedPackageSuite(new URL('..', import.meta.url), {
  exports: cli,
  entryPoints: ['runVerikit', 'parseEncryptionKeys'],
});

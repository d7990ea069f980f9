import { readmeSnippetSuite } from '../../../test-support/readme-suite.js';

readmeSnippetSuite(new URL('..', import.meta.url));

import { readFileSync } from 'node:fs';
import { defineProject } from 'vitest/config';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export default defineProject({
  define: { __VERIKIT_VERSION__: JSON.stringify(version), __VERIKIT_WEB_BUILD__: 'false' },
  test: {
    name: 'core',
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});

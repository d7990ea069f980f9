import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'postgres',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Hooks start PGlite: Postgres's initdb in WASM, all CPU (11.5 to 16 s seen for one start on a
    // loaded machine, more beside CPU burners). The bound only catches a hang; no result depends on it.
    hookTimeout: 120_000,
  },
});

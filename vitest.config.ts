import { defineConfig } from 'vitest/config';

// One root run over every package, so CI reads a single summary line.
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'recipes/*', 'tests/*'],
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // dist/ first, then the run's PostgreSQL cluster (torn down in the reverse order).
    globalSetup: ['test/global-setup.ts', 'test/postgres-setup.ts'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});

import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The Python SDK's interop test needs Python and its package index: `npm run test:python` only.
    exclude: process.env.AC_TEST_PYTHON_SDK
      ? configDefaults.exclude
      : [...configDefaults.exclude, 'test/python/**'],
    // dist/ first, then the browser tests' Chromium (unpacked from npm the first time), then the run's
    // PostgreSQL cluster (torn down in the reverse order).
    globalSetup: ['test/global-setup.ts', 'test/chromium-setup.ts', 'test/postgres-setup.ts'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});

import { defineConfig } from 'vitest/config';

const integration = (db: 'pglite' | 'postgres') => ({
  test: {
    name: db,
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-db.ts'],
    env: { SPOOL_TEST_DB: db },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

export default defineConfig({
  test: {
    projects: [{ test: { name: 'unit', include: ['src/**/*.test.ts'] } }, integration('pglite'), integration('postgres')],
  },
});

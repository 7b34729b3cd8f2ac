import { defineConfig } from 'vitest/config';

// Everything under test/ runs on PGlite; what exercises the database itself runs on PostgreSQL too.
const integration = (db: 'pglite' | 'postgres', include: string[], exclude: string[] = []) => ({
  test: {
    name: db,
    include,
    exclude,
    globalSetup: ['test/support/global-db.ts'],
    env: { SPOOL_TEST_DB: db },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['src/**/*.test.ts'] } },
      // Delivery across processes needs a server several processes share: PostgreSQL only.
      integration('pglite', ['test/**/*.test.ts'], ['test/delivery/**']),
      integration('postgres', ['test/store/**/*.test.ts', 'test/agent/**/*.test.ts', 'test/console/**/*.test.ts', 'test/delivery/**/*.test.ts']),
    ],
  },
});

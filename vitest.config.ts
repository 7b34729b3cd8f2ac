import { defineConfig } from 'vitest/config';

// Everything under test/ runs on the embedded PostgreSQL; what exercises the database itself runs on
// the PostgreSQL server too.
const integration = (db: 'embedded' | 'postgres', include: string[], exclude: string[] = []) => ({
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
      integration('embedded', ['test/**/*.test.ts'], ['test/delivery/**']),
      integration('postgres', ['test/store/**/*.test.ts', 'test/agent/**/*.test.ts', 'test/console/**/*.test.ts', 'test/delivery/**/*.test.ts']),
    ],
  },
});

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { defineConfig } from 'vitest/config';

// Node keeps the code it compiled on disk and reads it back in the next process that loads the same
// file: the test workers inherit this, and what they start with their environment (the MCP
// conformance suite and its client, 47 of each a run). Spool does the same (src/start.ts), there.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'node-compile-cache');

const delivery = (names: string[]) => names.map((name) => `test/core/delivery/${name}.test.ts`);

/**
 * A stall and shard takeovers: processes sharing one server, PostgreSQL only, timed against short
 * leases (a stall longer than a 1 s lease, a takeover within a 2 s one). They run after the rest,
 * one file at a time: what they measure is theirs, not the load of the files beside them.
 */
const SERIAL = [
  ...delivery(['database-stall']),
  // Discord's shards over replicas: a takeover timed against its lease.
  'test/adapters/discord/shards.test.ts',
];
/**
 * Processes sharing one server too, but held to no lease or grace a busy machine could outlast:
 * every message once and in order (200 threads at once, a database stopped or killed, two replicas
 * at the default 15 s lease); a turn within a 20 s grace, or one cut short by a 300 ms grace under
 * a 10-minute lease; identifies never closer than their spacing, which load only widens. They run
 * beside the rest: after it, one at a time, they were 35 s and 19 s of a run with one core idle.
 */
const POSTGRES_ONLY = [
  ...SERIAL,
  ...delivery(['usage-exact', 'concurrency', 'database-outage', 'replicas', 'shutdown']),
  'test/adapters/discord/identify-budget.test.ts',
];

// The rest runs four files at a time on two cores: most files wait on servers and processes more
// than they compute, and each file has a database of its own (test/support/file-database.ts). Four
// took `npm test` from 270-319 s (eight runs with three) to about 260 s on a quiet two-core machine.
const PARALLEL = { maxWorkers: 4, sequence: { groupOrder: 0 } };
const AFTER_THE_REST = { maxWorkers: 1, sequence: { groupOrder: 1 } };

// Everything under test/ runs on the embedded PostgreSQL; what exercises the database itself runs on
// the PostgreSQL server too.
const integration = (
  name: string,
  db: 'embedded' | 'postgres',
  files: { include: string[]; exclude?: string[] },
  order = PARALLEL,
) => ({
  test: {
    name,
    ...files,
    ...order,
    // Processes are started from dist/, compiled first when the source changed (support/build.ts).
    globalSetup: ['test/support/build.ts', 'test/support/global-db.ts'],
    setupFiles: ['test/support/file-database-setup.ts'],
    // A file's own state is its database and the processes it starts: files share their worker's
    // loaded modules, as the unit files do, instead of importing src/ and the test support again
    // each (the embedded project alone: 216 s and 389 s of CPU isolated, 177 s and 313 s shared).
    isolate: false,
    env: { SPOOL_TEST_DB: db },
    // A test that starts processes waits for a core on a busy two-core machine.
    testTimeout: 60_000,
    hookTimeout: 90_000,
    // A row or reply polled for comes when the machine gets to it: as long as `until` waits.
    expect: { poll: { timeout: 15_000 } },
  },
});

const POSTGRES_URL =
  process.env.SPOOL_TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

/** Whether the PostgreSQL server for the second pass answers. */
async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

// Without a server the rest of the suite still runs, and says so; CI sets SPOOL_REQUIRE_POSTGRES=1.
const postgres = await postgresAnswers();
if (!postgres) {
  const message = `PostgreSQL at ${POSTGRES_URL} does not answer`;
  const hint = 'Point SPOOL_TEST_POSTGRES_URL at a server to run the postgres pass.';
  if (process.env.SPOOL_REQUIRE_POSTGRES === '1')
    throw new Error(`${message}, and SPOOL_REQUIRE_POSTGRES=1 requires the postgres pass. ${hint}`);
  console.warn(
    `\n${message}: the postgres pass (and the delivery tests across processes) is skipped. ${hint}\n`,
  );
}

export default defineConfig({
  test: {
    projects: [
      // Unit files hold no process, server or database of their own, and each puts back what it
      // changes (fake timers): they share their worker's loaded modules instead of importing src/
      // again for every file (alone, the project ran in 32 s isolated, 19 s shared).
      // scripts/: the repository's own checks (the documentation's links).
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'scripts/**/*.test.ts'],
          isolate: false,
          ...PARALLEL,
          // The property tests compute for seconds (thousands of generated cases), beside the
          // integration projects' processes on two cores: one of 3 s in CI ran past the default 5 s.
          testTimeout: 30_000,
        },
      },
      // Delivery across processes needs a server several processes share: PostgreSQL only.
      integration('embedded', 'embedded', {
        include: ['test/**/*.test.ts'],
        exclude: POSTGRES_ONLY,
      }),
      ...(postgres
        ? [
            integration('postgres', 'postgres', {
              include: [
                'test/store/**/*.test.ts',
                'test/core/**/*.test.ts',
                // Both passes start the console process, in its two ways to a database: in the
                // embedded pass with DATA_DIR, on a server of its own it starts, locks and stops
                // (the default); in this one with DATABASE_URL. Not a repeat of the same work.
                'test/adapters/console/**/*.test.ts',
                // The corpora of real platform payloads: nothing lost, nothing invented, on both databases.
                'test/adapters/*/*-payloads.test.ts',
                // Discord's identifies spaced across replicas' processes: a server they share.
                'test/adapters/discord/identify-budget.test.ts',
              ],
              exclude: ['test/store/embedded-postgres.test.ts', ...SERIAL],
            }),
            integration('postgres-serial', 'postgres', { include: SERIAL }, AFTER_THE_REST),
          ]
        : []),
    ],
  },
});

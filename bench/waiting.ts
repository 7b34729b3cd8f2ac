/**
 * What calls awaiting approval cost while nobody decides: the leases the bot holds and the
 * transactions per second its database runs, with 50 calls waiting, beside the same bot idle
 * (nothing waiting), measured side by side in one run. The delivery engine runs as in production
 * (default lease and poll settings) over a scratch database on the PostgreSQL server at
 * SPOOL_BENCH_POSTGRES_URL (default: the local test server), whose statistics count the
 * transactions.
 *
 * WAITING (default 50) calls; WINDOW_S (default 15) seconds per measurement.
 */
import pg from 'pg';
import { DeliveryEngine } from '../src/core/delivery/engine/engine.ts';
import { deliverySettings } from '../src/core/delivery/settings.ts';
import type { Outbound } from '../src/core/ports/platform/platform.ts';
import { fileReader } from '../src/files/file-reader.ts';
import { EnvReader } from '../src/config.ts';
import { ApprovalLedger } from '../src/store/delivery/approval-ledger.ts';
import { QuestionLedger } from '../src/store/delivery/question-ledger.ts';
import { openDatabase } from '../src/store/database.ts';
import { DeliveryLedger } from '../src/store/delivery/delivery-ledger.ts';
import { HistorySearch } from '../src/store/transcripts/history-search.ts';
import { ResultIndexer } from '../src/store/transcripts/result-index.ts';
import { TranscriptStore } from '../src/store/transcripts/transcript-store.ts';
import { testAgent, testTool } from '../test/support/agent.ts';
import { FakeOpenAi } from '../test/support/fake-openai.ts';
import { createScratchDatabase } from '../test/support/global-db.ts';
import { silentLogger } from '../test/support/logger.ts';
import { until } from '../test/support/process.ts';

const WAITING = Number(process.env.WAITING ?? 50);
const WINDOW_S = Number(process.env.WINDOW_S ?? 15);

const scratch = await createScratchDatabase('spool_bench_waiting');
const db = await openDatabase({
  databaseUrl: scratch.url,
  dataDir: '',
  logger: silentLogger,
  poolSize: 4,
});
const llm = await new FakeOpenAi().start();
// Asks for the approved tool, then answers from its result: it answers only from its request.
llm.fallback = (request) =>
  request.messages.at(-1)!.role === 'user'
    ? { toolCalls: [{ id: 'c', name: 'deploy', arguments: '{"target":"prod"}' }] }
    : { content: `done: ${String(request.messages.at(-1)!.content)}` };
const stats = new pg.Client({ connectionString: scratch.url });
await stats.connect();

try {
  const store = new TranscriptStore(db);
  const deploy = testTool('deploy', () => ({ content: 'deployed', isError: false }));
  // The production defaults: poll every second, leases of 15 s renewed every 5 s.
  const settings = deliverySettings(new EnvReader({}));
  const engine = new DeliveryEngine(
    {
      agent: testAgent({ fake: llm, store, tools: [deploy] }),
      ledger: new DeliveryLedger(db),
      search: new HistorySearch(db.prisma, new ResultIndexer(db, silentLogger)),
      files: fileReader({ binaryMaxBytes: 1_000 }),
      approvals: new ApprovalLedger(db.prisma),
      questions: new QuestionLedger(db.prisma),
      logger: silentLogger,
    },
    {
      ...settings,
      holder: 'bench',
      policy: { rules: [{ match: { platform: 'bench' }, approve: ['deploy'] }] },
    },
  );
  let posted = 0;
  const outbound: Outbound = {
    render: (reply) => [reply],
    post: async () => `m${++posted}`,
    edit: async () => {},
    refuse: async () => {},
    showWorking: async () => async () => {},
  };
  engine.register('bench', outbound);
  engine.start();

  const commits = async () =>
    Number(
      (
        await stats.query(
          'SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()',
        )
      ).rows[0].xact_commit,
    );
  const leasesHeld = async () =>
    Number(
      (await stats.query('SELECT count(*) FROM lanes WHERE holder IS NOT NULL')).rows[0].count,
    );
  /**
   * Transactions per second over the window, and the leases held at its end. An idle backend
   * reports its counts to the statistics up to 10 s late: the window starts after that much quiet.
   */
  const measure = async () => {
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    const before = await commits();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_S * 1_000));
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    const after = await commits();
    // The two reads of the counter are transactions too; so are the 11 s of quiet after the window.
    return { perSecond: (after - before) / (WINDOW_S + 11), leases: await leasesHeld() };
  };

  const idle = await measure();
  for (let i = 0; i < WAITING; i++) {
    await engine.handleIncoming({
      lane: { platform: 'bench', workspace: 'W', channel: 'C', thread: `t${i}` },
      messageKey: `m${i}`,
      kind: 'message',
      user: 'U1',
      text: 'deploy it',
      delivery: {},
    });
  }
  const parked = async () =>
    (await stats.query(`SELECT count(*) FILTER (WHERE status = 'waiting') AS waiting FROM inbox`))
      .rows[0].waiting;
  await until(async () => (Number(await parked()) === WAITING ? true : undefined), 120_000);
  await until(async () => ((await leasesHeld()) === 0 ? true : undefined));
  const waiting = await measure();
  await engine.stop(0);

  console.log(
    `\n${WAITING} calls awaiting approval, beside the same bot idle (${WINDOW_S} s each, PostgreSQL):`,
  );
  console.log('| state | leases held | transactions / s | / idle |');
  console.log('|---|---|---|---|');
  console.log(`| idle | ${idle.leases} | ${idle.perSecond.toFixed(2)} | 1.00x |`);
  console.log(
    `| ${WAITING} awaiting approval | ${waiting.leases} | ${waiting.perSecond.toFixed(2)} | ${(waiting.perSecond / idle.perSecond).toFixed(2)}x |`,
  );
} finally {
  await stats.end();
  await llm.stop();
  await db.close();
  await scratch.drop();
}

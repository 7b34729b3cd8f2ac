/**
 * The database stalls for longer than the lease (issue 41): two real Spool replicas share a
 * PostgreSQL server of the test's own, a burst of threads arrives, and mid-burst the whole server
 * is paused (SIGSTOP to the postmaster and every process it started) and then let go (SIGCONT).
 * Every lease ran out meanwhile, so after the stall either replica may take any lane over, while
 * the holder it took it from still has writes and posts under way. Fenced leases make that
 * harmless: every message is answered once, each thread in order, and the only work done again is
 * a model request that was under way during the stall: asked before it and its answer not yet
 * stored when it began (at the model, or answered and the step still to be written), or asked
 * during it (its turn's step stored just before it); either answer can be stored only after every
 * lease ran out. A model request begun after the stall, or whose answer was stored before it, is
 * never asked twice: the step stored before it extended its lease.
 *
 * By default (what CI runs): `LEASE_TTL_MS=1000` and a 2 s pause, twice the lease. At 500 ms (a
 * heartbeat every 167 ms), the herd of statements both replicas send as the server comes back held
 * a renewal up past the lease on CI's two cores, once in three runs: a lane was taken over under a
 * turn begun after the stall, and its request asked again. STALL_SECONDS=20 runs the
 * default lease (15 s) with a 20 s pause instead, as a managed database's failover takes (slow:
 * run it by hand, `STALL_SECONDS=20 npx vitest run --project postgres-serial
 * test/core/delivery/database-stall.test.ts`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeOpenAi, lastUserText } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from '../../support/fake-slack.ts';
import { queryAt } from '../../support/global-db.ts';
import { startOwnPostgres, type OwnPostgres } from '../../support/own-postgres.ts';
import { freePort, until, type SpoolProcess } from '../../support/process.ts';
import { deliver, startSlackBot } from '../../support/slack-bot.ts';

const STALL_SECONDS = Number(process.env.STALL_SECONDS ?? 2);
/** The short lease with the short stall; the default lease (unset) with a long one. */
const LEASE: Record<string, string> = STALL_SECONDS <= 2 ? { LEASE_TTL_MS: '1000' } : {};
/** STALL_THREADS widens the burst (the held-out run had 200 threads). */
const THREADS = Number(process.env.STALL_THREADS ?? 40);
const MESSAGES = 3;
/** Threads whose messages start arriving during the stall. */
const LATE = Math.ceil(THREADS / 4);
const CHANNEL = 'CSTALL';
/** How long the model takes to answer: long enough that turns are at the model when it stalls. */
const MODEL_MS = 400;

let db: OwnPostgres;
let llm: FakeOpenAi;
let slack: FakeSlack;
let dir: string;
let ports: number[];
let bots: SpoolProcess[] = [];

beforeAll(async () => {
  [db, llm, slack] = await Promise.all([
    startOwnPostgres(),
    new FakeOpenAi().start(),
    new FakeSlack().start(),
  ]);
  llm.latencyMs = MODEL_MS;
  llm.fallback = (request) => ({ content: `answer to ${lastUserText(request)}` });
  dir = await mkdtemp(join(tmpdir(), 'spool-stall-'));
  ports = [await freePort(), await freePort()];
  const env = {
    OPENAI_BASE_URL: llm.baseURL,
    DATABASE_URL: db.url,
    SLACK_API_URL: slack.apiUrl,
    DATA_DIR: dir,
    ...LEASE,
  };
  bots = await Promise.all(ports.map((port) => startSlackBot(port, env)));
}, 120_000);
afterAll(async () => {
  for (const bot of bots) bot.child.kill('SIGTERM');
  await Promise.all(bots.map((bot) => bot.done.catch(() => {})));
  await Promise.all([llm?.stop(), slack?.stop()]);
  await db?.remove();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const textOf = (t: number, m: number) => `t${t} m${m}`;
const threadTs = (t: number) => `${5000 + t}.1`;
const body = (t: number, m: number) =>
  m === 1
    ? eventBody({
        type: 'app_mention',
        user: 'U1',
        text: `<@${BOT_USER}> ${textOf(t, m)}`,
        ts: threadTs(t),
        channel: CHANNEL,
      })
    : eventBody({
        type: 'message',
        channel_type: 'channel',
        user: 'U1',
        text: textOf(t, m),
        ts: `${5000 + t}.${m}`,
        thread_ts: threadTs(t),
        channel: CHANNEL,
      });
const posts = () => slack.callsTo('chat.postMessage').filter((p) => p.channel === CHANNEL);

/**
 * Delivered as Slack delivers: sent again (with its retry number) until it is acknowledged. During
 * the stall an ack cannot be recorded, so it waits or is refused, and Slack sends it again.
 */
async function deliverUntilAcked(port: number, event: Record<string, unknown>): Promise<number> {
  for (let retry = 0; ; retry++) {
    if (await deliver(port, event, retry)) return retry;
    // Slack's pace between retries, shortened.
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The sum of `spool_redone_total` on one replica's /metrics, by reason. */
async function redoneOn(port: number): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const byReason: Record<string, number> = {};
  for (const line of text.split('\n').filter((l) => l.startsWith('spool_redone_total{'))) {
    const reason = /reason="([^"]*)"/.exec(line)?.[1] ?? '?';
    const kind = /kind="([^"]*)"/.exec(line)?.[1] ?? '?';
    byReason[`${kind}/${reason}`] =
      (byReason[`${kind}/${reason}`] ?? 0) + Number(line.split(' ').at(-1));
  }
  return byReason;
}

it(
  `a ${STALL_SECONDS} s stall of the whole database, longer than the lease (${LEASE.LEASE_TTL_MS ?? 'default'} ms), mid-burst on two replicas: every message answered once, each thread in order, only turns at the model redone`,
  async () => {
    const all = Array.from({ length: THREADS }, (_, t) =>
      Array.from({ length: MESSAGES }, (_, m) => textOf(t, m + 1)),
    ).flat();
    // Each thread's messages one after the other, as a person types them (each acknowledged before
    // the next is sent), to either replica; all threads at once, but the last LATE threads start
    // only once the server is paused, so messages arrive during the stall too.
    const thread = async (t: number) => {
      let retries = 0;
      for (let m = 1; m <= MESSAGES; m++)
        retries += await deliverUntilAcked(ports[(t + m) % 2]!, body(t, m));
      return retries;
    };
    const early = Promise.all(Array.from({ length: THREADS - LATE }, (_, t) => thread(t)));

    // Mid-burst: some answers posted, turns at the model.
    const served = () => new Set(llm.served.map((s) => s.request));
    await slack.waitFor(
      () => posts().length >= THREADS / 2 && llm.requests.some((r) => !served().has(r)),
      60_000,
    );
    // The answers stored just before the stall: a turn whose answer the model had sent but whose
    // step was still to be written when the database stopped is under way too (on a busy machine,
    // most of a burst of answers is). A step stored between this and the pause counts as unstored.
    const stored = new Set(
      (
        await queryAt<{ content: string }>(
          db.url,
          `SELECT content FROM transcript_messages WHERE role = 'assistant' AND channel_key LIKE $1`,
          [`%${CHANNEL}%`],
        )
      ).map((row) => row.content.replace(/^answer to /, '')),
    );
    const requestedBefore = llm.requests.length;
    const stopped = await db.pause();
    const pausedAt = Date.now();
    const postedBefore = posts().length;
    const late = Promise.all(Array.from({ length: LATE }, (_, i) => thread(THREADS - LATE + i)));
    // The stall itself: held for its length, then let go.
    await new Promise((resolve) => setTimeout(resolve, STALL_SECONDS * 1_000));
    const requestedDuring = llm.requests.length;
    const unstoredAtStart = new Set(
      llm.requests
        .slice(0, requestedBefore)
        .map(lastUserText)
        .filter((text) => !stored.has(text)),
    );
    const underWay = new Set([
      ...unstoredAtStart,
      ...llm.requests.slice(requestedBefore, requestedDuring).map(lastUserText),
    ]);
    await db.resume();
    const stall = Date.now() - pausedAt;

    const retries = [...(await early), ...(await late)].reduce((a, b) => a + b, 0);
    // Every message answered: its inbox row says so (it is marked just after its reply is posted).
    await until(async () => {
      const rows = await queryAt<{ n: number }>(
        db.url,
        `SELECT count(*)::int AS n FROM inbox WHERE status = 'answered'`,
      );
      return rows[0]!.n === all.length ? true : undefined;
    }, 120_000);
    const redone = await Promise.all(ports.map(redoneOn));
    // Both replicas stopped (SIGTERM, each finishing what it runs): nothing more can be posted.
    for (const bot of bots) bot.child.kill('SIGTERM');
    const exits = await Promise.all(bots.map((bot) => bot.done));
    bots = [];

    const replies = posts().map((p) => String(p.text));
    const duplicates = all.filter(
      (text) => replies.filter((r) => r === `answer to ${text}`).length > 1,
    );
    const unanswered = all.filter((text) => !replies.includes(`answer to ${text}`));
    const disordered = Array.from({ length: THREADS }, (_, t) => t).filter((t) => {
      const inThread = posts()
        .filter((p) => p.thread_ts === threadTs(t))
        .map((p) => String(p.text));
      return (
        JSON.stringify(inThread) !==
        JSON.stringify(Array.from({ length: MESSAGES }, (_, m) => `answer to ${textOf(t, m + 1)}`))
      );
    });
    const asked = new Map(all.map((text) => [text, 0]));
    for (const request of llm.requests) {
      const text = lastUserText(request);
      asked.set(text, (asked.get(text) ?? 0) + 1);
    }
    const redoneTexts = all.filter((text) => asked.get(text)! > 1);
    const beyond = all.filter((text) => asked.get(text)! > 1 + (underWay.has(text) ? 1 : 0));
    const logged = (words: string) =>
      exits.reduce((n, exit) => n + (exit.stdout + exit.stderr).split(words).length - 1, 0);
    console.log(
      [
        `stall of ${stall} ms (${stopped.length} server processes stopped), lease ${LEASE.LEASE_TTL_MS ?? 'default'} ms:`,
        `${postedBefore}/${all.length} answered before it, ${unstoredAtStart.size} turns asked and not stored when it began and ${requestedDuring - requestedBefore} asked during it;`,
        `${retries} deliveries sent again; ${replies.length} replies for ${all.length} messages,`,
        `${duplicates.length} duplicates, ${disordered.length}/${THREADS} threads out of order,`,
        `${llm.requests.length} model requests, ${redoneTexts.length} messages asked again (${beyond.length} not under way during the stall),`,
        `spool_redone_total ${JSON.stringify(redone)}, ${logged('Request was aborted')} model requests logged as aborted, ${logged('The lane was taken over')} turns cut short by a takeover, ${logged('Could not answer a message')} failed attempts`,
      ].join(' '),
    );

    const failures = exits
      .flatMap((exit) => (exit.stdout + exit.stderr).split('\n'))
      .filter((line) => line.includes('Could not answer a message'));
    if (failures.length > 0) console.log(failures.slice(0, 5).join('\n'));

    expect(unanswered).toEqual([]);
    expect(duplicates).toEqual([]);
    expect(disordered).toEqual([]);
    expect(replies).toHaveLength(all.length);
    expect(beyond).toEqual([]);
    expect(llm.rejections).toEqual([]);
  },
  STALL_SECONDS * 1_000 + 240_000,
);

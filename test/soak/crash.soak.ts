/**
 * The crash suite: the real bot in Slack HTTP mode, against the fake Slack Web API with signed
 * events, a real slow MCP tool and the strict fake model, SIGKILLed at random moments and
 * restarted, while several threads keep talking and unacknowledged events are retried as Slack
 * does (with a duplicate delivery now and then). At the end every acknowledged message must be
 * answered exactly once, in order within its thread. Odd threads ask for long answers, which are
 * posted as file uploads: no upload may be posted twice either.
 *
 * SOAK_KILLS (default 30), SOAK_THREADS (default 4), SOAK_DB=postgres|embedded (default postgres),
 * SOAK_KILL=process|group (default process): `group` kills the bot's whole process group (its
 * MCP servers, and the embedded database's server with it) as a supervisor kills a container,
 * and waits until nothing of it runs before starting it again. Every start must succeed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi } from '../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from '../support/fake-slack.ts';
import { createScratchDatabase } from '../support/global-db.ts';
import { freePort, groupRuns, until, type SpoolProcess } from '../support/process.ts';
import { deliver, slowToolConfig, slowToolModel, startSlackBot } from '../support/slack-bot.ts';

const KILLS = Number(process.env.SOAK_KILLS ?? 30);
const THREADS = Number(process.env.SOAK_THREADS ?? 4);
const EMBEDDED = process.env.SOAK_DB === 'embedded';
const GROUP = process.env.SOAK_KILL === 'group';
const CHANNEL = 'CSOAK';

const pause = (min: number, max: number) =>
  new Promise((r) => setTimeout(r, min + Math.random() * (max - min)));
let sequence = 0;
const slackTs = () => `${Math.floor(Date.now() / 1000)}.${String(++sequence).padStart(6, '0')}`;

let scratch: { url: string; drop(): Promise<void> } | undefined;
let llm: FakeOpenAi;
let slack: FakeSlack;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  llm = await new FakeOpenAi().start();
  llm.fallback = slowToolModel(1);
  slack = await new FakeSlack().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-soak-'));
  await writeFile(join(dir, 'mcp.json'), slowToolConfig());
  if (!EMBEDDED) scratch = await createScratchDatabase('spool_soak');
  env = {
    OPENAI_BASE_URL: llm.baseURL,
    SLACK_API_URL: slack.apiUrl,
    MCP_CONFIG: join(dir, 'mcp.json'),
    DATA_DIR: join(dir, 'data'),
    LEASE_TTL_MS: '2000',
    // "answer to <an odd thread's long question>" is longer: it goes as an upload.
    REPLY_FILE_CHARS: '80',
    ...(scratch ? { DATABASE_URL: scratch.url } : {}),
  };
});
afterAll(async () => {
  await Promise.all([llm.stop(), slack.stop()]);
  await scratch?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe(`the bot SIGKILLed ${KILLS} times (${GROUP ? 'its process group' : 'its process'}, ${EMBEDDED ? 'embedded database' : 'PostgreSQL'})`, () => {
  it('answers every acknowledged message exactly once, in order within its thread', async () => {
    const port = await freePort();
    const acked = Array.from({ length: THREADS }, () => [] as string[]);
    let kills = 0;
    let bot: SpoolProcess | undefined;

    const talk = async (t: number) => {
      const root = slackTs();
      for (let m = 1; kills < KILLS; m++) {
        const text = `t${t} m${m}${t % 2 ? ` ${'please answer at length '.repeat(3)}`.trimEnd() : ''}`;
        const body =
          m === 1
            ? eventBody({
                type: 'app_mention',
                user: 'U1',
                text: `<@${BOT_USER}> ${text}`,
                ts: root,
                channel: CHANNEL,
              })
            : eventBody({
                type: 'message',
                channel_type: 'channel',
                user: 'U1',
                text,
                ts: slackTs(),
                thread_ts: root,
                channel: CHANNEL,
              });
        // Slack retries an event until it is acknowledged.
        for (let retry = 0; !(await deliver(port, body, retry)); retry++) await pause(50, 250);
        acked[t]!.push(text);
        if (Math.random() < 0.3) await deliver(port, body, 1);
        await pause(500, 4_000);
      }
      return root;
    };
    const crash = async () => {
      while (kills < KILLS) {
        bot = await startSlackBot(port, env, [], GROUP);
        await pause(200, 3_000);
        if (GROUP) process.kill(-bot.child.pid!, 'SIGKILL');
        else bot.child.kill('SIGKILL');
        await bot.done.catch(() => {});
        if (GROUP) await until(() => (groupRuns(bot!.child.pid!) ? undefined : true), 60_000);
        kills++;
      }
      bot = await startSlackBot(port, env, [], GROUP);
    };
    const [, ...roots] = await Promise.all([
      crash(),
      ...Array.from({ length: THREADS }, (_, t) => talk(t)),
    ]);

    const uploaded = (root: string) =>
      slack
        .callsTo('files.completeUploadExternal')
        .filter((c) => c.thread_ts === root)
        .map((c) => {
          const files = (typeof c.files === 'string' ? JSON.parse(c.files) : c.files) as Array<{
            id: string;
          }>;
          return slack.uploads.get(files[0]!.id)!.body ?? '';
        });
    const replies = (root: string) => [
      ...slack
        .callsTo('chat.postMessage')
        .filter((m) => m.thread_ts === root)
        .map((m) => String(m.text)),
      ...uploaded(root),
    ];
    const answered = () => roots.every((root, t) => replies(root).length >= acked[t]!.length);
    await slack.waitFor(answered, 180_000).catch(() => {});
    bot!.child.kill('SIGTERM');
    const exit = await bot!.done;

    const expected = acked.map((texts) => texts.map((text) => `answer to ${text}`));
    const got = roots.map(replies);
    const sent = acked.flat().length;
    const lost = expected.flatMap((texts, t) =>
      texts.filter((text) => !got[t]!.includes(text)),
    ).length;
    const duplicates = got.flatMap((texts) =>
      texts.filter((text, i) => texts.indexOf(text) !== i),
    ).length;
    const outOfOrder = got.filter(
      (texts, t) =>
        JSON.stringify(texts.filter((x) => expected[t]!.includes(x))) !==
        JSON.stringify(expected[t]!.filter((x) => texts.includes(x))),
    ).length;
    const deaf = got.filter((texts, t) => texts.length === 0 && expected[t]!.length > 0).length;
    const uploads = roots.flatMap(uploaded).length;
    console.log(
      `soak: ${kills} kills, ${sent} messages acknowledged (${uploads} answers uploaded as files), ${lost} lost, ${duplicates} duplicates, ${outOfOrder} threads out of order, ${deaf} deaf threads, ${llm.rejections.length} rejected requests`,
    );

    expect({ lost, duplicates, outOfOrder, deaf, rejections: llm.rejections }).toEqual({
      lost: 0,
      duplicates: 0,
      outOfOrder: 0,
      deaf: 0,
      rejections: [],
    });
    expect(uploads).toBeGreaterThan(0);
    expect(got).toEqual(expected);
    expect(exit.code).toBe(0);
  });
});

/**
 * The crash suite: the real bot in Slack HTTP mode, against the fake Slack Web API with signed
 * events, a real slow MCP tool and the strict fake model, SIGKILLed at random moments and
 * restarted, while several threads keep talking and unacknowledged events are retried as Slack
 * does (with a duplicate delivery now and then). At the end every acknowledged message must be
 * answered exactly once, in order within its thread. Odd threads ask for long answers, which are
 * posted as file uploads: no upload may be posted twice either. In even threads half the messages
 * are edited by their author, at once or later: each shows one answer, to the old words or the
 * new, and no answer to a message is posted twice.
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
import { createScratchDatabase, queryAt } from '../support/global-db.ts';
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
    /** The edited messages' new words, by their first words. */
    const edits = new Map<string, string>();
    let kills = 0;
    const killedAt: number[] = [];
    /** When each process was started: the one after killedAt[i] is startedAt[i + 1]. */
    const startedAt: number[] = [];
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
        const send = async (event: Record<string, unknown>) => {
          for (let retry = 0; !(await deliver(port, event, retry)); retry++) await pause(50, 250);
          if (Math.random() < 0.3) await deliver(port, event, 1);
        };
        await send(body);
        acked[t]!.push(text);
        if (t % 2 === 0 && Math.random() < 0.5) {
          await pause(0, 2_000);
          const edited = `${text} edited`;
          const said = body.event as { text: string; ts: string; thread_ts?: string };
          await send(
            eventBody({
              type: 'message',
              subtype: 'message_changed',
              hidden: true,
              channel: CHANNEL,
              channel_type: 'channel',
              ts: slackTs(),
              message: {
                type: 'message',
                user: 'U1',
                text: said.text.replace(text, edited),
                ts: said.ts,
                ...(said.thread_ts ? { thread_ts: said.thread_ts } : {}),
                edited: { user: 'U1', ts: slackTs() },
              },
              previous_message: { type: 'message', user: 'U1', text: said.text, ts: said.ts },
            }),
          );
          edits.set(text, edited);
        }
        await pause(500, 4_000);
      }
      return root;
    };
    const crash = async () => {
      while (kills < KILLS) {
        startedAt.push(Date.now());
        bot = await startSlackBot(port, env, { group: GROUP });
        await pause(200, 3_000);
        if (GROUP) process.kill(-bot.child.pid!, 'SIGKILL');
        else bot.child.kill('SIGKILL');
        killedAt.push(Date.now());
        await bot.done.catch(() => {});
        if (GROUP) await until(() => (groupRuns(bot!.child.pid!) ? undefined : true), 60_000);
        kills++;
      }
      startedAt.push(Date.now());
      bot = await startSlackBot(port, env, { group: GROUP });
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
    /** What the thread shows: each message Spool posted, as last edited (chat.update). */
    const shown = (call: (typeof slack.calls)[number]) =>
      String(
        slack.calls
          .filter((c) => c.method === 'chat.update' && c.args.ts === slack.tsOf(call))
          .at(-1)?.args.text ?? call.args.text,
      );
    const replies = (root: string) => [
      ...slack.calls
        .filter((c) => c.method === 'chat.postMessage' && c.args.thread_ts === root)
        .map(shown),
      ...uploaded(root),
    ];
    const answered = () => roots.every((root, t) => replies(root).length >= acked[t]!.length);
    await slack.waitFor(answered, 180_000).catch(() => {});
    bot!.child.kill('SIGTERM');
    const exit = await bot!.done;

    // An edited message's answer is to its old words or its new ones: whichever the thread shows.
    const got = roots.map(replies);
    const expected = acked.map((texts, t) =>
      texts.map((text) => {
        const edited = edits.get(text);
        return edited && got[t]!.includes(`answer to ${edited}`)
          ? `answer to ${edited}`
          : `answer to ${text}`;
      }),
    );
    const sent = acked.flat().length;
    const lost = expected.flatMap((texts, t) =>
      texts.filter((text) => !got[t]!.includes(text)),
    ).length;
    const duplicates = got.flatMap((texts) =>
      texts.filter((text, i) => texts.indexOf(text) !== i),
    ).length;
    // An edit answered after later messages (its turn had not run) is in the order it came: the
    // order is checked on the messages never edited.
    const unedited = (t: number) =>
      acked[t]!.filter((text) => !edits.has(text)).map((text) => `answer to ${text}`);
    const outOfOrder = got.filter(
      (texts, t) =>
        JSON.stringify(texts.filter((x) => unedited(t).includes(x))) !==
        JSON.stringify(unedited(t).filter((x) => texts.includes(x))),
    ).length;
    // Both the old words' answer and the new ones' shown: the edit answered twice.
    const twice = [...edits].filter(([text, edited]) =>
      got.some(
        (texts) => texts.includes(`answer to ${text}`) && texts.includes(`answer to ${edited}`),
      ),
    ).length;
    const deaf = got.filter((texts, t) => texts.length === 0 && expected[t]!.length > 0).length;
    const uploads = roots.flatMap(uploaded).length;
    console.log(
      `soak: ${kills} kills, ${sent} messages acknowledged (${uploads} answers uploaded as files, ${edits.size} edited), ${lost} lost, ${duplicates + twice} duplicates, ${outOfOrder} threads out of order, ${deaf} deaf threads, ${llm.rejections.length} rejected requests`,
    );

    expect({ lost, duplicates, twice, outOfOrder, deaf, rejections: llm.rejections }).toEqual({
      lost: 0,
      duplicates: 0,
      twice: 0,
      outOfOrder: 0,
      deaf: 0,
      rejections: [],
    });
    expect(uploads).toBeGreaterThan(0);
    expect(edits.size).toBeGreaterThan(0);
    // Every message's one answer, each in its place; an edit's, where the edit put it.
    expect(got.map((texts) => [...texts].sort())).toEqual(
      expected.map((texts) => [...texts].sort()),
    );
    expect(exit.code).toBe(0);
    if (scratch) await expectUsageOfEachCompletion(scratch.url, killedAt, startedAt);
  });
});

/**
 * Each completion the model server answered is stored once, with the usage it reported; one is
 * missing only where a kill took it with the process, between its answer and the step's write.
 * The fake model runs in this process, so a request the bot sent just before its kill may be read
 * and answered after the kill was recorded: until the next process starts, every answer went to
 * the killed one.
 */
async function expectUsageOfEachCompletion(
  url: string,
  killedAt: number[],
  startedAt: number[],
): Promise<void> {
  const rows = await queryAt<{ response_id: string; total_tokens: number }>(
    url,
    'SELECT response_id, total_tokens FROM llm_usage',
  );
  const served = new Map(llm.served.map((s) => [s.id, s]));
  const ids = rows.map((r) => r.response_id);
  const missing = llm.served.filter((s) => !ids.includes(s.id));
  // Each missing one's time from the nearest kill (negative: before it).
  const fromKill = missing.map((s) =>
    Math.min(...killedAt.map((k) => s.at - k).filter((d) => d > -1_000), Infinity),
  );
  console.log(
    `soak usage: ${llm.served.length} completions served, ${rows.length} stored, ${missing.length} taken by a kill (ms from it: ${fromKill.join(', ')})`,
  );
  expect(new Set(ids).size).toBe(ids.length);
  expect(
    rows.filter((r) => served.get(r.response_id)?.usage.total_tokens !== r.total_tokens),
  ).toEqual([]);
  // Served to the process a kill took: at most a second before the kill, or after it and before
  // the next process started.
  const takenBy = (at: number) => killedAt.some((k, i) => k - at < 1_000 && at < startedAt[i + 1]!);
  expect(missing.filter((s) => !takenBy(s.at))).toEqual([]);
}

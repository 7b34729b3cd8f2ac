/**
 * A schedule every minute, on the real clock, across two replicas of the real bot (Slack HTTP
 * mode, the fake Slack Web API, one PostgreSQL database): one replica is SIGKILLed and restarted
 * early on, and later both are SIGKILLed for two minutes. Every tick must run once (one inbox row,
 * one header, one answer in its thread), and the ticks missed during the outage as one run, the
 * latest of them, on return.
 *
 * SOAK_SCHEDULE_MINUTES (default 30; at least 6): how long the schedule runs. Run with
 * `npx vitest run --config vitest.soak.config.ts test/soak/schedule.soak.ts`; SOAK_LOG_FILE keeps
 * the bots' output.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi } from '../support/fake-openai.ts';
import { FakeSlack, signedRequest, TEAM } from '../support/fake-slack.ts';
import { createScratchDatabase, queryAt } from '../support/global-db.ts';
import { freePort, until, type SpoolProcess } from '../support/process.ts';
import { SIGNING_SECRET, startSlackBot } from '../support/slack-bot.ts';

const MINUTES = Math.max(6, Number(process.env.SOAK_SCHEDULE_MINUTES ?? 30));
const OUTAGE_MS = 120_000;
const CHANNEL = 'CTICKS';
const MINUTE = 60_000;
const SLASH = (
  JSON.parse(
    readFileSync(
      new URL('../fixtures/slack-payloads/79-slash-command-other-with-args.json', import.meta.url),
      'utf8',
    ),
  ) as { payload: Record<string, string> }
).payload;

let scratch: { url: string; drop(): Promise<void> };
let llm: FakeOpenAi;
let slack: FakeSlack;
let dir: string;
let env: Record<string, string>;
const bots: Array<SpoolProcess | undefined> = [];
/** Each ended process's output, written to SOAK_LOG_FILE when it is set: what a red run needs. */
const outputs: string[] = [];
const keepOutput = async (bot: SpoolProcess | undefined) => {
  const ended = await bot?.done.catch((error: Error) => ({ stdout: error.message, stderr: '' }));
  if (ended) outputs.push(`--- pid ${bot!.child.pid}\n${ended.stdout}${ended.stderr}`);
};

beforeAll(async () => {
  llm = await new FakeOpenAi().start();
  llm.fallback = () => ({ content: 'tock' });
  slack = await new FakeSlack().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-schedule-soak-'));
  scratch = await createScratchDatabase('spool_schedule_soak');
  env = {
    OPENAI_BASE_URL: llm.baseURL,
    SLACK_API_URL: slack.apiUrl,
    DATABASE_URL: scratch.url,
    DATA_DIR: dir,
    LEASE_TTL_MS: '2000',
  };
});

afterAll(async () => {
  for (const bot of bots) bot?.child.kill('SIGKILL');
  await Promise.all(bots.map(keepOutput));
  if (process.env.SOAK_LOG_FILE) writeFileSync(process.env.SOAK_LOG_FILE, outputs.join('\n'));
  await Promise.all([llm.stop(), slack.stop()]);
  await scratch.drop();
  await rm(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
/** Until the clock is `second` seconds into a minute: kills and restarts fall between ticks. */
const midMinute = (second = 30) => sleep((second * 1000 - (Date.now() % MINUTE) + MINUTE) % MINUTE);

async function kill(i: number): Promise<void> {
  bots[i]?.child.kill('SIGKILL');
  await keepOutput(bots[i]);
  bots[i] = undefined;
}

describe(`a schedule every minute for ${MINUTES} minutes on two replicas, with a SIGKILL and a two-minute outage`, () => {
  it(
    'runs each tick once, and the ticks missed during the outage once, as the latest',
    async () => {
      const ports = [await freePort(), await freePort()];
      // Each process outlives the whole run unless killed (the default ten minutes would end it).
      const start = (i: number) =>
        startSlackBot(ports[i]!, env, { timeoutMs: (MINUTES + 10) * MINUTE }).then(
          (bot) => (bots[i] = bot),
        );
      await Promise.all([start(0), start(1)]);
      const body = new URLSearchParams({
        ...SLASH,
        team_id: TEAM,
        channel_id: CHANNEL,
        user_id: 'U-owner',
        command: '/spool',
        text: 'schedule every minute Tick',
        response_url: slack.responseUrl('schedule'),
      }).toString();
      const response = await fetch(
        `http://127.0.0.1:${ports[0]}/slack/events`,
        signedRequest(body, SIGNING_SECRET, 'application/x-www-form-urlencoded'),
      );
      expect(response.status).toBe(200);
      await slack.waitFor(() => slack.responses('schedule').length > 0);
      const id = /Scheduled #(\d+)/.exec(slack.responses('schedule')[0]!)![1]!;
      const began = Date.now();

      // A replica dies between two ticks and comes back; the other carries on meanwhile.
      await sleep(2 * MINUTE);
      await midMinute();
      await kill(0);
      await start(0);
      // Both die for two minutes.
      await sleep(Math.max(0, began + (MINUTES / 2) * MINUTE - Date.now()));
      await midMinute(20);
      const downAt = Date.now();
      await Promise.all([kill(0), kill(1)]);
      await sleep(OUTAGE_MS);
      await midMinute(20);
      const backAt = Date.now();
      await Promise.all([start(0), start(1)]);
      const endAt = began + MINUTES * MINUTE;
      await sleep(endAt - Date.now());

      const rows = () =>
        queryAt<{ tick: string; status: string }>(
          scratch.url,
          `SELECT split_part(message_key, ':', 3) || ':' || split_part(message_key, ':', 4) || ':' || split_part(message_key, ':', 5) AS tick, status
           FROM inbox WHERE message_key LIKE $1 ORDER BY message_key`,
          [`schedule:${id}:%`],
        );
      // The outage may end after the schedule's time is up: the run on return is the last then.
      const lastTick = Math.floor(Math.max(endAt, backAt) / MINUTE) * MINUTE;
      // Waited for, then checked whatever came: a failure shows the rows.
      await until(async () => {
        const all = await rows();
        return all.some((r) => Date.parse(r.tick) === lastTick) &&
          all.every((r) => r.status === 'answered')
          ? true
          : undefined;
      }, 60_000).catch(() => undefined);
      const all = await rows();
      expect(all.filter((r) => r.status !== 'answered')).toEqual([]);
      const ticks = all.map((r) => Date.parse(r.tick));
      const expected: number[] = [];
      for (let t = Math.ceil(began / MINUTE) * MINUTE; t <= lastTick; t += MINUTE)
        if (t <= downAt || t > backAt) expected.push(t);
      expected.push(Math.floor(backAt / MINUTE) * MINUTE);
      const iso = (t: number[]) => t.map((x) => new Date(x).toISOString());
      expect({ downAt: iso([downAt]), backAt: iso([backAt]), ticks: iso(ticks) }).toEqual({
        downAt: iso([downAt]),
        backAt: iso([backAt]),
        ticks: iso([...new Set(expected)].sort((a, b) => a - b)),
      });

      console.log(
        `${ticks.length} runs for the ticks from ${iso([expected[0]!])[0]} to ${iso([lastTick])[0]}: ` +
          `down ${iso([downAt])[0]} to ${iso([backAt])[0]}, the ticks missed meanwhile run once as ` +
          `${iso([Math.floor(backAt / MINUTE) * MINUTE])[0]}; ${all.length} rows, all answered`,
      );
      const posts = slack.calls.filter(
        (c) => c.method === 'chat.postMessage' && c.args.channel === CHANNEL,
      );
      const headers = posts.filter((c) => !c.args.thread_ts);
      expect(headers.map((c) => c.args.text)).toEqual(ticks.map(() => 'Scheduled: Tick'));
      for (const header of headers)
        expect(
          posts.filter((c) => c.args.thread_ts === slack.tsOf(header)).map((c) => c.args.text),
        ).toEqual(['tock']);
    },
    (MINUTES + 10) * MINUTE,
  );
});

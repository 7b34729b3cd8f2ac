import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FakeOpenAi,
  type ChatRequest,
  type ScriptedError,
  type ScriptedReply,
} from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from '../../support/fake-slack.ts';
import { createScratchDatabase, queryAt } from '../../support/global-db.ts';
import { freePort, until, type SpoolProcess } from '../../support/process.ts';
import { deliver, SLOW_TOOL, slowToolConfig, startSlackBot } from '../../support/slack-bot.ts';

/**
 * Usage as Spool stores it, per person and channel, against what the model server reported, one
 * completion at a time: over plain answers, tool calls, replies cut off and continued, requests
 * the server failed and the client retried, and a replica killed in the middle of turns.
 */

/** Each question says who asked where: `kind n u=U1 c=CA`. */
const TAG = /^(\w+) \d+ u=(\w+) c=(\w+)$/;

let scratch: { url: string; drop(): Promise<void> };
let llm: FakeOpenAi;
let slack: FakeSlack;
let dir: string;
let ports: number[];
let env: Record<string, string>;
const bots: SpoolProcess[] = [];

/** The question a request answers, and where it sits in the request. */
function questionOf(request: ChatRequest): { text: string; at: number } {
  for (let at = request.messages.length - 1; at >= 0; at--) {
    const m = request.messages[at]!;
    const text = m.role === 'user' ? (m.content ?? '').replace(`<@${BOT_USER}> `, '') : '';
    if (TAG.test(text)) return { text, at };
  }
  throw new Error('a request with no tagged question');
}

/** Failed once, each `flaky` question: the server's error, which the client retries. */
const failedOnce = new Set<string>();

function model(request: ChatRequest): ScriptedReply | ScriptedError {
  const { text, at } = questionOf(request);
  const kind = TAG.exec(text)![1]!;
  const answered = request.messages.slice(at + 1).some((m) => m.role !== 'user');
  if (kind === 'flaky' && !failedOnce.has(text)) {
    failedOnce.add(text);
    return { status: 500, message: 'overloaded', type: 'server_error' };
  }
  if ((kind === 'tool' || kind === 'crash') && !answered)
    return {
      toolCalls: [
        {
          id: 'call_0',
          name: SLOW_TOOL,
          arguments: JSON.stringify({ duration: kind === 'crash' ? 6 : 1, steps: 1 }),
        },
      ],
    };
  if (kind === 'long' && !answered) return { content: 'part one, ', finishReason: 'length' };
  return { content: `answer to ${text}` };
}

beforeAll(async () => {
  scratch = await createScratchDatabase('spool_usage_exact');
  llm = await new FakeOpenAi().start();
  llm.fallback = model;
  slack = await new FakeSlack().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-usage-'));
  await writeFile(join(dir, 'mcp.json'), slowToolConfig());
  await writeFile(
    join(dir, 'policy.json'),
    JSON.stringify({
      rules: [],
      prices: { 'fake-model': { input: 3, cachedInput: 0.3, output: 15 } },
    }),
  );
  ports = [await freePort(), await freePort()];
  env = {
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_MODEL: 'fake-model',
    DATABASE_URL: scratch.url,
    SLACK_API_URL: slack.apiUrl,
    MCP_CONFIG: join(dir, 'mcp.json'),
    POLICY_FILE: join(dir, 'policy.json'),
    DATA_DIR: dir,
  };
  bots.push(...(await Promise.all(ports.map((port) => startSlackBot(port, env)))));
}, 60_000);

afterAll(async () => {
  for (const bot of bots) bot.child.kill('SIGTERM');
  await Promise.all(bots.map((bot) => bot.done.catch(() => {})));
  await Promise.all([llm.stop(), slack.stop()]);
  await scratch.drop();
  await rm(dir, { recursive: true, force: true });
});

const query = <T extends pg.QueryResultRow>(sql: string, values: unknown[] = []) =>
  queryAt<T>(scratch.url, sql, values);

const replies = () => slack.callsTo('chat.postMessage').length;
const ask = (n: number, kind: string, user: string, channel: string) =>
  deliver(
    ports[n % 2]!,
    eventBody({
      type: 'app_mention',
      user,
      text: `<@${BOT_USER}> ${kind} ${n} u=${user} c=${channel}`,
      ts: `700.${n}`,
      channel,
    }),
  );

interface Totals {
  requests: number;
  prompt: number;
  cached: number;
  completion: number;
  reasoning: number;
  total: number;
}

describe('usage per person and channel', () => {
  it('equals the sum of what the model server reported, request by request, through continuations, retries and a killed replica', async () => {
    const kinds = ['plain', 'tool', 'long', 'flaky'];
    const users = ['U1', 'U2', 'U3'];
    const channels = ['CA', 'CB'];
    for (let n = 0; n < 24; n++)
      expect(await ask(n, kinds[n % 4]!, users[n % 3]!, channels[n % 2]!)).toBe(true);
    await slack.waitFor(() => replies() === 24, 90_000);

    // Two turns whose tool runs for 6 s; the replica working the first is killed while it runs,
    // when no model request is in flight anywhere, and started again.
    expect(await ask(24, 'crash', 'U1', 'CA')).toBe(true);
    expect(await ask(25, 'crash', 'U2', 'CB')).toBe(true);
    await until(async () => {
      const [row] = await query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tool_calls c JOIN conversations v ON v.id = c.conversation_id
          WHERE v.thread IN ('700.24', '700.25')`,
      );
      return row!.n === 2 || undefined;
    }, 30_000);
    const [lane] = await query<{ holder: string }>(
      `SELECT holder FROM lanes WHERE thread = '700.24'`,
    );
    const holder = lane!.holder;
    const victim = bots.findIndex((b) => holder.includes(`:${b.child.pid}:`));
    expect(victim).toBeGreaterThanOrEqual(0);
    bots[victim]!.child.kill('SIGKILL');
    await bots[victim]!.done.catch(() => {});
    bots[victim] = await startSlackBot(ports[victim]!, env);
    await slack.waitFor(() => replies() === 26, 90_000);

    // Every completion the server answered, for whom and where its question was asked.
    const served = new Map<string, Totals>();
    for (const { request, usage } of llm.served) {
      const [, , user, channel] = TAG.exec(questionOf(request).text)!;
      const key = `${user} ${channel}`;
      const t = served.get(key) ?? {
        requests: 0,
        prompt: 0,
        cached: 0,
        completion: 0,
        reasoning: 0,
        total: 0,
      };
      served.set(key, {
        requests: t.requests + 1,
        prompt: t.prompt + usage.prompt_tokens,
        cached: t.cached + usage.prompt_tokens_details.cached_tokens,
        completion: t.completion + usage.completion_tokens,
        reasoning: t.reasoning + usage.completion_tokens_details.reasoning_tokens,
        total: t.total + usage.total_tokens,
      });
    }
    const stored = await until(async () => {
      const rows = await query<Totals & { key: string }>(
        `SELECT user_id || ' ' || channel AS key, count(*)::int AS requests,
                sum(prompt_tokens)::int AS prompt, sum(cached_prompt_tokens)::int AS cached,
                sum(completion_tokens)::int AS completion, sum(reasoning_tokens)::int AS reasoning,
                sum(total_tokens)::int AS total
           FROM llm_usage GROUP BY 1 ORDER BY 1`,
      );
      return rows.reduce((n, r) => n + r.requests, 0) === llm.served.length ? rows : undefined;
    });
    expect(Object.fromEntries(stored.map(({ key, ...t }) => [key, t]))).toEqual(
      Object.fromEntries([...served].sort(([a], [b]) => a.localeCompare(b))),
    );
    // The same completions, none twice: by the server's ids.
    const ids = await query<{ response_id: string }>(
      'SELECT response_id FROM llm_usage ORDER BY id',
    );
    expect(ids.map((r) => r.response_id).sort()).toEqual(llm.served.map((s) => s.id).sort());
    // Each priced as the table says.
    const [priced] = await query<{ off: number }>(
      `SELECT count(*)::int AS off FROM llm_usage
        WHERE abs(cost - ((prompt_tokens - cached_prompt_tokens) * 3 + cached_prompt_tokens * 0.3 + completion_tokens * 15) / 1e6) > 1e-9`,
    );
    expect(priced!.off).toBe(0);
    // What the soak went through: retried failures, continued replies, and the restarted turn.
    expect(failedOnce.size).toBe(6);
    expect(llm.requests.length).toBeGreaterThan(llm.served.length);
    expect(
      llm.served.filter((s) => TAG.exec(questionOf(s.request).text)![1] === 'long'),
    ).toHaveLength(12);
    expect(await query('SELECT 1 FROM spend_holds')).toEqual([]);
  }, 240_000);
});

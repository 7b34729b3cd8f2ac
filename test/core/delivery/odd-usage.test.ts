import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMetrics } from '../../../src/observability.ts';
import type { Database } from '../../../src/store/database.ts';
import { testAgent, testTool } from '../../support/agent.ts';
import { testDatabase, testEngine, testStore } from '../../support/db.ts';
import { FakeOpenAi, type ChatRequest } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack, TEAM } from '../../support/fake-slack.ts';
import { RecordingLogger } from '../../support/logger.ts';
import { until } from '../../support/process.ts';
import { deliver } from '../../support/slack-bot.ts';
import { serveSlackAdapter, type ServedSlackAdapter } from '../../support/slack-spool.ts';

/**
 * A model server that reports usage Spool cannot keep as it is: each turn's first request (a tool
 * call) reports one odd usage, its second (the answer) a sane one. Issue 41 measured 3 of 8 such
 * turns answered, negative totals stored, and a response without usage holding its cap for ten
 * minutes.
 */
const ODD: Record<string, Record<string, unknown> | null> = {
  null: { prompt_tokens: null, completion_tokens: 5, total_tokens: 105 },
  nan: { prompt_tokens: 'NaN', completion_tokens: 5, total_tokens: 'NaN' },
  fraction: { prompt_tokens: 1000.5, completion_tokens: 5, total_tokens: 1005.5 },
  huge: { prompt_tokens: 3e9, completion_tokens: 5, total_tokens: 3e9 + 5 },
  past: { prompt_tokens: 9e15, completion_tokens: 5, total_tokens: 9e15 + 5 },
  negative: { prompt_tokens: -2_830, completion_tokens: -5, total_tokens: -2_835 },
  cached: {
    prompt_tokens: 100,
    prompt_tokens_details: { cached_tokens: 500 },
    completion_tokens: 5,
    completion_tokens_details: { reasoning_tokens: 9 },
    total_tokens: 105,
  },
  none: null,
};
const CASES = Object.keys(ODD);

let db: Database;
let llm: FakeOpenAi;
let slack: FakeSlack;
let bot: ServedSlackAdapter;
const logger = new RecordingLogger();
const registry = new Registry();
/** Each case's channel: its own, so its holds are its turn's alone. */
const channels = Object.fromEntries(CASES.map((c) => [c, `CODD${randomUUID().slice(0, 8)}`]));
/** What the channel held when the tool ran: after the first request's step was written. */
const heldAtTool = new Map<string, number[]>();

const caseOf = (request: ChatRequest) =>
  /odd (\w+)/.exec(request.messages.find((m) => m.role === 'user')!.content ?? '')![1]!;

beforeAll(async () => {
  db = await testDatabase();
  llm = await new FakeOpenAi().start();
  llm.fallback = (request) => {
    const which = caseOf(request);
    return request.messages.some((m) => m.role === 'tool')
      ? { content: `answer ${which}` }
      : {
          toolCalls: [{ id: 'call_1', name: 'probe', arguments: JSON.stringify({ which }) }],
          usage: ODD[which],
        };
  };
  slack = await new FakeSlack().start();
  const store = testStore(db);
  const probe = testTool('probe', async (args) => {
    const channel = channels[String(args.which)]!;
    const holds = await db.prisma.spendHold.findMany({
      where: { workspace: TEAM, channel },
      orderBy: { id: 'asc' },
    });
    heldAtTool.set(
      String(args.which),
      holds.map((h) => h.tokens),
    );
    return { content: 'probed', isError: false };
  });
  const agent = testAgent({
    fake: llm,
    store,
    tools: [probe],
    logger,
    hooks: agentMetrics(registry, { depth: async () => ({ pending: 0, oldestSeconds: 0 }) }),
  });
  const pipeline = testEngine(db, agent, {
    policy: {
      rules: [],
      prices: { 'fake-model': { input: 3, cachedInput: 0.3, output: 15 } },
      // A cap far off, on each channel: every request holds, none is refused.
      caps: [{ per: 'channel', period: 'day', tokens: 1_000_000_000 }],
    },
  });
  bot = await serveSlackAdapter(pipeline, { apiUrl: slack.apiUrl });
});

afterAll(async () => {
  await bot.stop();
  await db.close();
  await Promise.all([llm.stop(), slack.stop()]);
});

describe('usage a model server got wrong', () => {
  it('costs no answer: 8 of 8 turns answered, totals never negative, each hold gone with its request and its turn', async () => {
    for (const [n, which] of CASES.entries())
      expect(
        await deliver(
          bot.port,
          eventBody({
            type: 'app_mention',
            user: 'U1',
            text: `<@${BOT_USER}> odd ${which}`,
            ts: `4100.${n}`,
            channel: channels[which],
          }),
        ),
      ).toBe(true);
    const replies = () =>
      slack
        .callsTo('chat.postMessage')
        .filter((m) => Object.values(channels).includes(String(m.channel)));
    await slack.waitFor(() => replies().length === CASES.length, 60_000);
    expect(Object.fromEntries(replies().map((m) => [m.channel, m.text]))).toEqual(
      Object.fromEntries(CASES.map((c) => [channels[c], `answer ${c}`])),
    );

    // Every request stored, odd ones as clamped or dropped: none negative, none past an int.
    const rows = await until(async () => {
      const found = await db.prisma.llmUsage.findMany({
        where: { workspace: TEAM, channel: { in: Object.values(channels) } },
        orderBy: { id: 'asc' },
      });
      // The response without usage stores none.
      return found.length === 2 * CASES.length - 1 ? found : undefined;
    });
    for (const row of rows) {
      for (const n of [
        row.promptTokens,
        row.cachedPromptTokens,
        row.completionTokens,
        row.reasoningTokens,
        row.totalTokens,
      ])
        expect(n).toBeGreaterThanOrEqual(0);
      expect(row.cachedPromptTokens).toBeLessThanOrEqual(row.promptTokens);
      expect(row.reasoningTokens).toBeLessThanOrEqual(row.completionTokens);
      expect(row.totalTokens).toBeGreaterThanOrEqual(row.promptTokens + row.completionTokens);
      expect(Number(row.cost)).toBeGreaterThanOrEqual(0);
    }
    const first = (which: string) =>
      rows.find((r) => r.channel === channels[which] && r.responseId === firstResponse(which))!;
    const firstResponse = (which: string) =>
      llm.served.find(
        (s) => caseOf(s.request) === which && !s.request.messages.some((m) => m.role === 'tool'),
      )!.id;
    expect(first('null')).toMatchObject({ promptTokens: 100, totalTokens: 105 });
    expect(first('nan')).toMatchObject({ promptTokens: 0, completionTokens: 5, totalTokens: 5 });
    expect(first('fraction')).toMatchObject({ promptTokens: 1_001, totalTokens: 1_006 });
    expect(first('huge')).toMatchObject({ promptTokens: 0, totalTokens: 5 });
    expect(first('past')).toMatchObject({ promptTokens: 0, totalTokens: 5 });
    expect(first('negative')).toMatchObject({ promptTokens: 0, totalTokens: 0 });
    expect(first('cached')).toMatchObject({
      promptTokens: 100,
      cachedPromptTokens: 100,
      reasoningTokens: 5,
    });
    const totals = await db.prisma.llmUsage.groupBy({
      by: ['channel'],
      where: { workspace: TEAM, channel: { in: Object.values(channels) } },
      _sum: { totalTokens: true },
    });
    for (const t of totals) expect(t._sum.totalTokens).toBeGreaterThan(0);

    // When the tool ran, the first request's hold was gone (its usage written, or, without usage,
    // released when the response came): only the turn's reserve was left.
    expect(new Set(heldAtTool.keys())).toEqual(new Set(CASES));
    for (const held of heldAtTool.values()) expect(held).toHaveLength(1);
    // And nothing is held once the turns are over.
    expect(
      await db.prisma.spendHold.count({
        where: { workspace: TEAM, channel: { in: Object.values(channels) } },
      }),
    ).toBe(0);

    // Each odd number named in a warning, and counted; no observer failed on a negative count.
    const warned = logger.lines.filter((l) => l.message.startsWith('[usage]'));
    expect(warned).toHaveLength(CASES.length - 1);
    expect(
      logger.lines.filter(
        (l) => (l.level === 'warn' || l.level === 'error') && !l.message.startsWith('[usage]'),
      ),
    ).toEqual([]);
    const adjusted = await registry.getSingleMetric('spool_llm_usage_adjusted_total')!.get();
    const count = (field: string, fix: string) =>
      adjusted.values.find((v) => v.labels.field === field && v.labels.fix === fix)?.value ?? 0;
    expect(count('prompt_tokens', 'derived')).toBe(1);
    expect(count('prompt_tokens', 'rounded')).toBe(1);
    expect(count('prompt_tokens', 'dropped')).toBe(4);
    expect(count('cached_tokens', 'clamped')).toBe(1);
    expect(count('reasoning_tokens', 'clamped')).toBe(1);
    expect(llm.rejections).toEqual([]);
  });
});

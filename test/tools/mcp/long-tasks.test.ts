import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { STOPPED_REPLY } from '../../../src/core/delivery/engine/engine.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';
import { queryAt } from '../../support/global-db.ts';
import { FakeOpenAi, type ChatRequest, type ScriptedReply } from '../../support/fake-openai.ts';
import { BOT_USER, eventBody, FakeSlack } from '../../support/fake-slack.ts';
import { freePort, until, type SpoolProcess } from '../../support/process.ts';
import { deliver, startSlackBot } from '../../support/slack-bot.ts';

/**
 * Tools that run for long, as MCP tasks on a server of their own process, in both eras: the
 * 2025-11-25 era's tasks (test/fixtures/task-mcp-server.mjs) and the 2026-07-28 era's tasks
 * extension (test/fixtures/modern-task-mcp-server.mjs). The turn parks on the task holding
 * nothing, a restart follows the same task by its id instead of calling again, its result is
 * stored once, and a Stop cancels it at its server.
 */
const SERVERS = [
  { era: '2025-11-25', fixture: 'test/fixtures/task-mcp-server.mjs', tag: 'A' },
  {
    era: '2026-07-28, the tasks extension',
    fixture: 'test/fixtures/modern-task-mcp-server.mjs',
    tag: 'B',
  },
];
let llm: FakeOpenAi;
let slack: FakeSlack;
/**
 * The bots a test started, stopped when it ends: all share the file's database, and one left
 * running would take up the next test's messages (with the other era's server, in the next
 * `describe`).
 */
const bots: SpoolProcess[] = [];
/** How long the task of the restart runs: TASK_SECONDS=600 for the ten minutes. */
const SECONDS = Number(process.env.TASK_SECONDS ?? 6);

/** A new question gets one call of the research tool for `seconds`; its result, the answer. */
function researchModel(request: ChatRequest): ScriptedReply {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') return { content: `found: ${last.content}` };
  const [topic, seconds] = String(last.content).split(' ').slice(-2);
  const args = JSON.stringify({ topic, seconds: Number(seconds) });
  return { toolCalls: [{ id: 'call_0', name: 'tasks__research', arguments: args }] };
}

interface ServerEvent {
  event: 'listening' | 'call' | 'get' | 'result' | 'cancel';
  taskId?: string;
  topic?: string;
  at: number;
}

const threadReplies = (channel: string) =>
  slack.callsTo('chat.postMessage').filter((m) => m.channel === channel);

beforeAll(async () => {
  llm = await new FakeOpenAi().start();
  llm.fallback = researchModel;
  slack = await new FakeSlack().start();
});

afterEach(async () => {
  const running = bots.splice(0);
  for (const bot of running) bot.child.kill('SIGTERM');
  await Promise.all(running.map((bot) => bot.done.catch(() => {})));
});

afterAll(() => Promise.all([llm.stop(), slack.stop()]));

const mention = (channel: string, ts: string, text: string) =>
  eventBody({ type: 'app_mention', user: 'U1', text: `<@${BOT_USER}> ${text}`, ts, channel });

/** The tool's stored results in the channel: one per call, whatever followed the task. */
const storedResults = (channel: string) =>
  queryAt<{ content: string }>(
    fileDatabaseUrl(),
    `SELECT r.content FROM tool_results r JOIN tool_calls c ON c.id = r.call_id
      WHERE r.channel_key LIKE '%"' || $1 || '"]' AND r.tool_name = 'tasks__research'`,
    [channel],
  );

describe.each(SERVERS)('a tool that runs as a task, MCP $era', ({ fixture, tag }) => {
  let dir: string;
  let events: string;
  let server: ChildProcess;
  let env: Record<string, string>;

  const seen = async (): Promise<ServerEvent[]> =>
    (await readFile(events, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ServerEvent);

  const taskOf = async (topic: string) =>
    (await seen()).find((e) => e.event === 'call' && e.topic === topic)?.taskId;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'spool-tasks-'));
    events = join(dir, 'events.jsonl');
    const port = await freePort();
    server = spawn(process.execPath, [fixture], {
      env: { ...process.env, PORT: String(port), EVENTS_FILE: events },
      stdio: 'inherit',
    });
    await until(async () => ((await seen()).length > 0 ? true : undefined));
    await writeFile(
      join(dir, 'mcp.json'),
      JSON.stringify({ mcpServers: { tasks: { url: `http://127.0.0.1:${port}/mcp` } } }),
    );
    env = {
      OPENAI_BASE_URL: llm.baseURL,
      DATABASE_URL: fileDatabaseUrl(),
      SLACK_API_URL: slack.apiUrl,
      MCP_CONFIG: join(dir, 'mcp.json'),
      DATA_DIR: dir,
      LEASE_TTL_MS: '1500',
    };
  }, 60_000);

  afterAll(async () => {
    server?.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'is followed by its id after a SIGKILL: the server sees one call, the thread one answer',
    async () => {
      const port = await freePort();
      const first = await startSlackBot(port, env);
      bots.push(first);
      const channel = `CTASKKILL${tag}`;
      const asked = `research otters ${SECONDS}`;
      expect(await deliver(port, mention(channel, '3100.1', asked))).toBe(true);
      const taskId = await until(() => taskOf('otters'), 30_000);
      const called = (await seen()).find((e) => e.event === 'call' && e.taskId === taskId)!.at;
      // Halfway through the task, once the server has looked at it for this bot: it follows it.
      await until(
        async () =>
          Date.now() - called >= (SECONDS * 1000) / 2 &&
          (await seen()).some((e) => e.event === 'get' && e.taskId === taskId)
            ? true
            : undefined,
        SECONDS * 1000 + 30_000,
      );
      first.child.kill('SIGKILL');
      await first.done.catch(() => {});
      const killedAt = Date.now();

      const next = await startSlackBot(await freePort(), env);
      bots.push(next);
      const answer = await until(
        () => threadReplies(channel).find((m) => String(m.text).includes('report on otters')),
        SECONDS * 1000 + 60_000,
      );
      console.log(
        `The task's end to the answer in the thread: ${Date.now() - called - SECONDS * 1000} ms (at most)`,
      );
      expect(answer.thread_ts).toBe('3100.1');
      const server = await seen();
      expect(server.filter((e) => e.event === 'call' && e.topic === 'otters')).toHaveLength(1);
      // The process that came after the kill looked at the same task, and took its result.
      expect(server.some((e) => e.event === 'get' && e.taskId === taskId && e.at > killedAt)).toBe(
        true,
      );
      expect(server.filter((e) => e.event === 'result' && e.taskId === taskId)).toHaveLength(1);
      expect(threadReplies(channel)).toHaveLength(1);
      expect(await storedResults(channel)).toEqual([{ content: 'report on otters' }]);
      // The task is kept by the call's id, and marked ended once its result was taken.
      const rows = await queryAt<{ task_id: string; status: string }>(
        fileDatabaseUrl(),
        'SELECT task_id, status FROM tool_tasks',
      );
      expect(rows).toContainEqual({ task_id: taskId, status: 'completed' });
    },
    SECONDS * 3000 + 120_000,
  );

  it('parks its turn holding no lease, and a Stop cancels the task at its server', async () => {
    const port = await freePort();
    const bot = await startSlackBot(port, env);
    bots.push(bot);
    const channel = `CTASKSTOP${tag}`;
    expect(await deliver(port, mention(channel, '3200.1', 'research badgers 600'))).toBe(true);
    const taskId = await until(() => taskOf('badgers'), 30_000);
    // Parked: its message waits for the task's next look, and no lease holds its lane.
    await until(async () => {
      const [row] = await queryAt<{ status: string; held: boolean }>(
        fileDatabaseUrl(),
        `SELECT i.status, l.lease_expires_at > now() AS held FROM inbox i
             LEFT JOIN lanes l ON l.id = i.lane_id WHERE i.message_key = $1`,
        [`${channel}:3200.1`],
      );
      return row?.status === 'waiting' && !row.held ? true : undefined;
    }, 30_000);
    const stoppedAt = Date.now();
    expect(
      await deliver(
        port,
        eventBody({
          type: 'agent_session_stopped',
          channel,
          thread_ts: '3200.1',
          user: 'U1',
          streaming_message_ts: [],
          ts: '3200.2',
        }),
      ),
    ).toBe(true);
    const cancelled = await until(async () =>
      (await seen()).find((e) => e.event === 'cancel' && e.taskId === taskId),
    );
    console.log(`Stop to the task's cancellation at its server: ${cancelled.at - stoppedAt} ms`);
    await until(() => threadReplies(channel).find((m) => m.text === STOPPED_REPLY));
    expect((await seen()).filter((e) => e.event === 'call' && e.topic === 'badgers')).toHaveLength(
      1,
    );
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratchDatabase } from '../../support/db.ts';
import { queryAt } from '../../support/global-db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import {
  BOT_USER,
  buttonClick,
  eventBody,
  FakeSlack,
  isPrompt,
  signedRequest,
} from '../../support/fake-slack.ts';
import { freePort, REPO_ROOT, type SpoolProcess } from '../../support/process.ts';
import { deliver, SIGNING_SECRET, startSlackBot } from '../../support/slack-bot.ts';

let scratch: { url: string; drop(): Promise<void> };
let llm: FakeOpenAi;
let slack: FakeSlack;
let dir: string;
let env: Record<string, string>;
const bots: SpoolProcess[] = [];

beforeAll(async () => {
  scratch = await scratchDatabase('spool_approval_restart');
  llm = await new FakeOpenAi().start();
  llm.fallback = (request) =>
    request.messages.at(-1)!.role === 'user'
      ? { toolCalls: [{ id: 'call_0', name: 'ops__deploy', arguments: '{"target":"prod"}' }] }
      : { content: `answer: ${request.messages.at(-1)!.content}` };
  slack = await new FakeSlack().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-approval-'));
  const server = join(REPO_ROOT, 'test/fixtures/counting-mcp-server.mjs');
  await writeFile(
    join(dir, 'mcp.json'),
    JSON.stringify({
      mcpServers: {
        ops: { command: process.execPath, args: [server], env: { COUNT_FILE: join(dir, 'runs') } },
      },
    }),
  );
  await writeFile(
    join(dir, 'policy.json'),
    JSON.stringify({
      rules: [{ match: { platform: 'slack' }, approve: ['ops__*'], approvers: ['U9'] }],
    }),
  );
  env = {
    OPENAI_BASE_URL: llm.baseURL,
    DATABASE_URL: scratch.url,
    SLACK_API_URL: slack.apiUrl,
    MCP_CONFIG: join(dir, 'mcp.json'),
    POLICY_FILE: join(dir, 'policy.json'),
    DATA_DIR: dir,
    LEASE_TTL_MS: '1500',
  };
}, 60_000);

afterAll(async () => {
  for (const bot of bots) bot.child.kill('SIGTERM');
  await Promise.all(bots.map((bot) => bot.done.catch(() => {})));
  await Promise.all([llm.stop(), slack.stop()]);
  await scratch.drop();
  await rm(dir, { recursive: true, force: true });
});

const runs = () =>
  existsSync(join(dir, 'runs'))
    ? readFileSync(join(dir, 'runs'), 'utf8').split('\n').filter(Boolean).length
    : 0;

const approvalRow = async (toolCallId: string) =>
  (
    await queryAt<{ approval: string; approval_by: string | null; run_started_at: Date | null }>(
      scratch.url,
      'SELECT approval, approval_by, run_started_at FROM tool_calls WHERE tool_call_id = $1',
      [toolCallId],
    )
  )[0]!;

describe('an approval that outlives the process waiting for it', () => {
  it('SIGKILLed while waiting, then a click on the restarted bot: the tool runs once and the answer arrives', async () => {
    const firstPort = await freePort();
    const first = await startSlackBot(firstPort, env);
    bots.push(first);
    const ch = 'CAPPROVE1';
    expect(
      await deliver(
        firstPort,
        eventBody({
          type: 'app_mention',
          user: 'U1',
          text: `<@${BOT_USER}> deploy prod`,
          ts: '2000.1',
          channel: ch,
        }),
      ),
    ).toBe(true);
    await slack.waitFor(() => slack.prompts(ch).length === 1, 30_000);
    const prompt = slack.prompts(ch)[0]!;
    expect(await approvalRow(prompt.toolCallId)).toMatchObject({
      approval: 'pending',
      run_started_at: null,
    });
    first.child.kill('SIGKILL');
    await first.done.catch(() => {});
    expect(runs()).toBe(0);

    const secondPort = await freePort();
    const second = await startSlackBot(secondPort, env);
    bots.push(second);
    const click = (responseId: string) =>
      fetch(
        `http://127.0.0.1:${secondPort}/slack/events`,
        signedRequest(
          new URLSearchParams({
            payload: JSON.stringify(
              buttonClick({
                user: 'U9',
                channel: ch,
                messageTs: prompt.ts,
                threadTs: '2000.1',
                actionId: 'spool_approve',
                value: prompt.toolCallId,
                responseUrl: slack.responseUrl(responseId),
              }),
            ),
          }).toString(),
          SIGNING_SECRET,
          'application/x-www-form-urlencoded',
        ),
      );
    expect((await click('first')).status).toBe(200);
    const answer = () =>
      slack.callsTo('chat.postMessage').find((m) => m.channel === ch && !isPrompt(m));
    await slack.waitFor(() => answer() !== undefined, 30_000);
    expect(answer()!.text).toBe('answer: deployed prod (run 1)');
    expect(runs()).toBe(1);
    // A late second click changes nothing, and the prompt was posted once, then edited to say who
    // approved it.
    expect((await click('late')).status).toBe(200);
    await slack.waitFor(() =>
      slack.calls.some(
        (c) =>
          c.method === 'response_url' &&
          String(c.args.text) === 'This call was already approved by <@U9>.',
      ),
    );
    expect(runs()).toBe(1);
    expect(slack.prompts(ch)).toHaveLength(1);
    expect(slack.callsTo('chat.update').find((c) => c.ts === prompt.ts)?.text).toMatch(
      /^✅ Approved by <@U9> at /,
    );
    expect(await approvalRow(prompt.toolCallId)).toMatchObject({
      approval: 'approved',
      approval_by: 'U9',
      run_started_at: expect.any(Date),
    });
  });
});

import { describe, expect, it } from 'vitest';
import { DeliveryEngine, STOPPED_REPLY } from '../engine/engine.ts';
import { clickReply, STOPPED_CLICK_REPLY } from '../posts/approval-text.ts';
import { STOPPED_PROMPT } from '../posts/replies.ts';
import { Agent } from '../../agent/agent.ts';
import type { LlmPort, LlmRequest } from '../../ports/llm.ts';
import type { InboundMessage } from '../../ports/platform/delivery.ts';
import type { ApprovalClick, Outbound, OutgoingChunk } from '../../ports/platform/platform.ts';
import { builtinSource, ToolRegistry } from '../../../tools/registry.ts';
import { defaultAgentOptions, testTool } from '../../../../test/support/agent.ts';
import { silentLogger } from '../../../../test/support/logger.ts';
import { until } from '../../../../test/support/process.ts';
import {
  MemoryApprovals,
  MemoryLedger,
  MemoryQuestions,
  MemoryStore,
} from '../../../../test/support/memory-store.ts';

const SECRET = 'sk-live-secret-value-1234567890';

/** Asks to deploy; once it has the result, says what it read. It answers only from its request. */
const model = (requests: LlmRequest[]): LlmPort => ({
  async complete(request) {
    requests.push(request);
    const last = request.messages.at(-1)!;
    const usage = { model: 'm', promptTokens: 1, completionTokens: 1, totalTokens: 2 };
    if (last.role === 'tool')
      return { content: `tool said: ${last.content}`, toolCalls: [], finishReason: 'stop', usage };
    return {
      content: '',
      toolCalls: [
        { id: 'c', name: 'deploy', arguments: JSON.stringify({ target: 'prod', token: SECRET }) },
      ],
      finishReason: 'tool_calls',
      usage,
    };
  },
});

const message = (key: string): InboundMessage => ({
  lane: { platform: 'test', workspace: 'W', channel: 'C', thread: 't' },
  messageKey: key,
  kind: 'message',
  user: 'U1',
  text: 'deploy it',
  delivery: {},
});

/** A platform that keeps what was posted and edited. */
function platform(askApproval?: Outbound['askApproval']) {
  const posted: OutgoingChunk[] = [];
  const edits: Array<{ id: string; text: string }> = [];
  const outbound: Outbound = {
    render: (reply) => [reply],
    post: async (_m, chunk) => `msg-${posted.push(chunk)}`,
    edit: async (_m, id, chunk) => void edits.push({ id, text: chunk.text }),
    refuse: async () => {},
    showWorking: async () => async () => {},
    ...(askApproval ? { askApproval } : {}),
  };
  return { outbound, posted, edits };
}

/** One bot: the agent over the shared store, its pipeline over the shared inbox and approvals. */
function bot(
  shared: { store: MemoryStore; inbox: MemoryLedger; approvals: MemoryApprovals; runs: string[] },
  outbound: Outbound,
  approvalTimeoutMs = 600_000,
) {
  const requests: LlmRequest[] = [];
  const deploy = testTool('deploy', (args) => ({
    content: `deployed to ${String(shared.runs.push(String(args.target)) && args.target)}`,
    isError: false,
  }));
  const agent = new Agent(
    {
      llm: model(requests),
      tools: new ToolRegistry([builtinSource([deploy])]),
      store: shared.store,
      logger: silentLogger,
    },
    defaultAgentOptions,
  );
  const files = { read: async () => ({ content: '', isError: false }) };
  const policy = {
    rules: [{ match: { platform: 'test' }, approve: ['dep*'], approvers: ['U9', 'U8'] }],
  };
  const pipeline = new DeliveryEngine(
    {
      agent,
      ledger: shared.inbox,
      search: { searchHistory: async () => [], storedResult: async () => undefined },
      files,
      approvals: shared.approvals,
      questions: new MemoryQuestions(),
      logger: silentLogger,
    },
    {
      holder: `bot-${Math.random()}`,
      leaseMs: 5_000,
      pollMs: 20,
      maxAttempts: 3,
      files: { maxBytes: 1_000, maxPerMessage: 2 },
      replyFileChars: 8_000,
      policy,
      approvalTimeoutMs,
      questionTimeoutMs: 600_000,
    },
  );
  pipeline.register('test', outbound);
  // Running: its poll takes up a message whose decision is due (a timeout).
  pipeline.start();
  return { pipeline, requests };
}

const fresh = () => ({
  store: new MemoryStore(),
  inbox: new MemoryLedger(),
  approvals: new MemoryApprovals(),
  runs: [] as string[],
});
/** Until `condition` holds (the shared poller, which gives up after 15 s). */
const whenTrue = (condition: () => boolean) => until(() => condition() || undefined);
const click = (toolCallId: string, user: string, approve = true): ApprovalClick => ({
  lane: message('x').lane,
  user,
  toolCallId,
  approve,
});

describe('approvals through the pipeline and the agent', () => {
  it('posts a prompt with the arguments masked, runs nothing until an approver clicks, then runs once and edits the prompt', async () => {
    const shared = fresh();
    const { outbound, posted, edits } = platform();
    const { pipeline } = bot(shared, outbound);
    const handled = await pipeline.handleIncoming(message('m1'), { waitForReply: true });
    await whenTrue(() => posted.length === 1);
    const prompt = posted[0]!;
    expect(prompt.seq).toBeLessThan(0);
    expect(prompt.text).toContain('`deploy`');
    expect(prompt.text).toContain('"target": "prod"');
    expect(prompt.text).not.toContain(SECRET);
    const id = prompt.approval!.toolCallId;
    expect(await pipeline.decideApproval(click(id, 'U1'))).toEqual({ status: 'not_allowed' });
    expect(shared.runs).toEqual([]);
    const [first, second] = await Promise.all([
      pipeline.decideApproval(click(id, 'U9')),
      pipeline.decideApproval(click(id, 'U8', false)),
    ]);
    expect(first.status).toBe('decided');
    expect(second).toMatchObject({ status: 'already', state: { status: 'approved', by: 'U9' } });
    expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
    expect(shared.runs).toEqual(['prod']);
    expect(edits).toEqual([
      {
        id: 'msg-1',
        text: expect.stringMatching(
          /^✅ Approved by <@U9> at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: `deploy`\.$/,
        ),
      },
    ]);
    expect(posted.at(-1)!.text).toBe('tool said: deployed to prod');
    await pipeline.stop(0);
  });

  it('says a parked turn waits for approval, after its prompt, until the turn is taken up again', async () => {
    const shared = fresh();
    const events: string[] = [];
    const { outbound, posted } = platform();
    const { pipeline } = bot(shared, {
      ...outbound,
      post: async (m, chunk) => {
        events.push(chunk.approval ? 'prompt' : `reply: ${chunk.text}`);
        return outbound.post(m, chunk);
      },
      showWorking: async () => {
        events.push('working');
        return async () => void events.push('working ends');
      },
      showStatus: async (_m, status) => void events.push(`status: ${status}`),
    });
    const handled = await pipeline.handleIncoming(message('m1'), { waitForReply: true });
    const waiting = 'status: waiting for approval of deploy from <@U9> or <@U8>';
    await whenTrue(() => shared.inbox.rows.some((row) => row.status === 'waiting'));
    // Shown after the turn's indicator ended and its prompt was posted (Slack clears a status
    // when a message is posted).
    expect(events).toEqual(['working', 'working ends', 'prompt', waiting]);
    await pipeline.decideApproval(click(posted[0]!.approval!.toolCallId, 'U9'));
    expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
    // Taken up again: the working indicator replaces it, and the reply ends it.
    expect(events.slice(4)).toEqual([
      'working',
      'working ends',
      'reply: tool said: deployed to prod',
    ]);
    await pipeline.stop(0);
  });

  it('gives the model a denial, and a timeout, as an error it can tell the user about', async () => {
    for (const [decide, reason] of [
      [true, 'denied it'],
      [false, 'nobody approved it within 1 second.'],
    ] as const) {
      const shared = fresh();
      const { outbound, posted, edits } = platform();
      // The denial's prompt waits as long as any (no race between the click and a 200 ms expiry
      // on a busy machine); the other expires in 200 ms.
      const { pipeline } = bot(shared, outbound, decide ? undefined : 200);
      const handled = await pipeline.handleIncoming(message('m1'), { waitForReply: true });
      await whenTrue(() => posted.length === 1);
      if (decide)
        expect(
          (await pipeline.decideApproval(click(posted[0]!.approval!.toolCallId, 'U9', false)))
            .status,
        ).toBe('decided');
      expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
      expect(shared.runs).toEqual([]);
      expect(posted.at(-1)!.text).toContain(reason);
      expect(edits[0]!.text).toMatch(
        decide
          ? /^❌ Denied by <@U9>/
          : /^⌛ Expired at .+ with no decision: `deploy` was not run\.$/,
      );
      await pipeline.stop(0);
    }
  });

  it('goes on after a restart with the same decision: the prompt is not posted again, and the call runs once', async () => {
    const shared = fresh();
    const before = platform();
    const first = bot(shared, before.outbound);
    await first.pipeline.handleIncoming(message('m1'));
    await whenTrue(() => before.posted.length === 1);
    // Cut short while it waits, as a shutdown or a lost lease does.
    await first.pipeline.stop(0);
    const after = platform();
    const second = bot(shared, after.outbound);
    // Nothing waits for the decision meanwhile: the message is parked on its row, holding no lease.
    expect(shared.inbox.rows.map((r) => r.status)).toEqual(['waiting']);
    const id = before.posted[0]!.approval!.toolCallId;
    expect((await second.pipeline.decideApproval(click(id, 'U9'))).status).toBe('decided');
    await whenTrue(() => after.posted.length === 1);
    // The first post after the restart is the reply: the prompt was not posted again.
    expect(after.posted.map((p) => p.text)).toEqual(['tool said: deployed to prod']);
    expect(shared.runs).toEqual(['prod']);
    // The model was not asked again for the call: the restarted turn ran the stored one.
    expect(second.requests).toHaveLength(1);
    await second.pipeline.stop(0);
  });

  it('asks in place of buttons where the platform asks the person at hand (the console), and records their answer', async () => {
    const shared = fresh();
    const asked: string[] = [];
    const { outbound, posted } = platform(
      async (_m, prompt) => (
        asked.push(prompt),
        { approved: false, note: 'no terminal to ask on' }
      ),
    );
    const { pipeline } = bot(shared, outbound);
    const handled = await pipeline.handleIncoming(message('m1'), { waitForReply: true });
    expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
    expect(asked[0]).toContain('`deploy`');
    expect([...shared.approvals.calls.values()]).toMatchObject([
      { status: 'denied', by: 'U1', note: 'no terminal to ask on' },
    ]);
    expect(posted.map((p) => p.text)).toEqual([expect.stringContaining('(no terminal to ask on)')]);
    await pipeline.stop(0);
  });

  it('closes the approval prompt of a parked message its author edits, as a Stop does', async () => {
    const shared = fresh();
    const { outbound, posted, edits } = platform();
    const { pipeline } = bot(shared, outbound);
    await pipeline.handleIncoming(message('m7'));
    await whenTrue(() => posted.length === 1);
    const id = posted[0]!.approval!.toolCallId;
    const edit = { lane: message('x').lane, messageKey: 'm7', user: 'U1', text: 'deploy it now' };
    expect(await pipeline.editIncoming({ ...edit, editKey: 'm7:edited:1' })).toBe('edited');
    // The old prompt says it was stopped (the edited words' turn is the next in the lane).
    await whenTrue(() => edits.length > 0);
    expect(edits).toEqual([{ id: 'msg-1', text: STOPPED_PROMPT }]);
    expect(clickReply(await pipeline.decideApproval(click(id, 'U9')), 'test')).toBe(
      STOPPED_CLICK_REPLY,
    );
    expect(shared.runs).toEqual([]);
    await pipeline.stop(0);
  });

  it('ends a message parked for an approval when someone stops it: the call never runs, its prompt says so without buttons, and a late click is told why it changes nothing', async () => {
    const shared = fresh();
    const { outbound, posted, edits } = platform();
    const { pipeline, requests } = bot(shared, outbound);
    const handled = await pipeline.handleIncoming(message('m9'), { waitForReply: true });
    await whenTrue(() => posted.length === 1);
    const id = posted[0]!.approval!.toolCallId;
    expect(await pipeline.stopTurn({ lane: message('x').lane, user: 'U1' })).toBe('stopping');
    expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
    expect(posted.at(-1)!.text).toBe(STOPPED_REPLY);
    expect(requests).toHaveLength(1);
    // The prompt (the first message posted) is edited: an edit carries no buttons.
    expect(edits).toEqual([{ id: 'msg-1', text: STOPPED_PROMPT }]);
    const late = await pipeline.decideApproval(click(id, 'U9'));
    expect(late).toMatchObject({ status: 'already', state: { status: 'denied' } });
    expect(clickReply(late, 'test')).toBe(STOPPED_CLICK_REPLY);
    // The lane's next message is answered; the stopped call has not run.
    await pipeline.handleIncoming(message('m10'), { waitForReply: true });
    await whenTrue(() => posted.filter((c) => c.approval).length === 2);
    expect(shared.runs).toEqual([]);
    expect(await pipeline.stopTurn({ lane: message('x').lane, user: 'U1' }, 'm9')).toBe('nothing');
    await pipeline.stop(0);
  });
});

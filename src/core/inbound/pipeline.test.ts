import { describe, expect, it } from 'vitest';
import { FAILURE_REPLY, InboundPipeline } from './pipeline.ts';
import { NotRecordedError, type InboundMessage, type Outbound, type OutgoingChunk } from '../ports/inbox.ts';
import type { TurnResult, TurnRunner } from '../ports/turns.ts';
import { silentLogger } from '../../../test/support/logger.ts';
import { MemoryApprovals, MemoryInbox } from '../../../test/support/memory-store.ts';

/** A platform that keeps what was posted, and says it found nothing a crashed process posted. */
function recordingOutbound() {
  const posted: OutgoingChunk[] = [];
  const refused: string[] = [];
  /** For each turn, whether a reply followed when its working indicator ended. */
  const replyFollowed: boolean[] = [];
  const outbound: Outbound = {
    render: (reply) => reply.match(/[^]{1,10}/g) ?? [''],
    post: async (_message, chunk) => {
      posted.push(chunk);
      return `ts-${posted.length}`;
    },
    refuse: async (message) => void refused.push(message.messageKey),
    showWorking: async () => async (replyFollows) => void replyFollowed.push(replyFollows),
  };
  return { outbound, posted, refused, replyFollowed };
}

/** Turns that wait until the test lets each go, so the order they run in shows. */
function heldTurns() {
  const started: string[] = [];
  const release = new Map<string, (result: TurnResult) => void>();
  const runner: TurnRunner = {
    runTurn: (_conversation, text) => {
      started.push(text);
      return new Promise((resolve) => release.set(text, resolve));
    },
  };
  return { runner, started, answer: (text: string) => release.get(text)!({ reply: `re: ${text}`, status: 'ok' }) };
}

const message = (key: string, text: string, thread = 't1', user = 'U1'): InboundMessage => ({
  lane: { platform: 'test', workspace: 'W', channel: 'C', thread },
  messageKey: key,
  kind: 'message',
  user,
  text,
  delivery: {},
});

function pipelineOver(inbox: MemoryInbox, agent: TurnRunner, maxAttempts = 3) {
  const files = { read: async () => ({ content: 'a file', isError: false }) };
  return new InboundPipeline({ agent, inbox, search: { searchHistory: async () => [], storedResult: async () => undefined }, files, approvals: new MemoryApprovals(), logger: silentLogger }, { holder: 'me', leaseMs: 5_000, pollMs: 50, maxAttempts, files: { maxBytes: 1_000, maxPerMessage: 2 }, replyFileChars: 8_000, approvalTimeoutMs: 600_000 });
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
};

describe('InboundPipeline over an in-memory inbox', () => {
  it('stores a message once, answers a lane in arrival order one at a time, and posts each reply in chunks', async () => {
    const inbox = new MemoryInbox();
    const turns = heldTurns();
    const { outbound, posted } = recordingOutbound();
    const pipeline = pipelineOver(inbox, turns.runner);
    pipeline.register('test', outbound);
    const first = await pipeline.handleIncoming(message('m1', 'first question'), { waitForReply: true });
    expect(await pipeline.handleIncoming(message('m1', 'first question'))).toEqual({ status: 'duplicate' });
    const second = await pipeline.handleIncoming(message('m2', 'second'), { waitForReply: true });
    await until(() => turns.started.length === 1);
    turns.answer('first question');
    expect(first.status === 'accepted' && (await first.answered)).toBe('ok');
    await until(() => turns.started.length === 2);
    expect(turns.started).toEqual(['first question', 'second']);
    turns.answer('second');
    expect(second.status === 'accepted' && (await second.answered)).toBe('ok');
    expect(posted.map((p) => p.text).join('')).toBe('re: first questionre: second');
    expect(inbox.rows.map((r) => r.status)).toEqual(['answered', 'answered']);
    await pipeline.stop(0);
  });

  it('posts a reply longer than replyFileChars as one file where the platform posts files, and as messages where not', async () => {
    const long = 'x'.repeat(8_001);
    for (const postsFiles of [true, false]) {
      const inbox = new MemoryInbox();
      const { outbound, posted } = recordingOutbound();
      const pipeline = pipelineOver(inbox, { runTurn: async () => ({ reply: long, status: 'ok' }) });
      pipeline.register('test', { ...outbound, postsFiles });
      const handled = await pipeline.handleIncoming(message('m1', 'everything'), { waitForReply: true });
      expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
      if (postsFiles) expect(posted).toEqual([{ inboxId: '1', seq: 0, text: expect.stringContaining('8,001 characters'), file: { name: 'reply-1.md', content: long, language: 'markdown' } }]);
      else expect(posted.map((p) => p.text).join('')).toBe(long);
    }
  });

  it("hands a message's files to its turn, and names below the reply each one it could not read", async () => {
    const inbox = new MemoryInbox();
    const { outbound, posted } = recordingOutbound();
    const read: string[] = [];
    const agent: TurnRunner = {
      runTurn: async (_c, _text, options) => {
        for (const file of (await options?.files?.()) ?? []) read.push(`${file.name}: ${file.outcome.content}`);
        return { reply: 'done', status: 'ok' };
      },
    };
    const pipeline = pipelineOver(inbox, agent);
    pipeline.register('test', { ...outbound, render: (reply) => [reply] });
    const files = [{ name: 'a.txt', mimeType: 'text/plain', sizeBytes: 5, url: 'https://files.example/a.txt' }];
    const handled = await pipeline.handleIncoming({ ...message('m1', 'see this'), files }, { waitForReply: true });
    expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
    expect(read).toEqual(['a.txt: {"error":"The shared file \\"a.txt\\" was not read: files cannot be fetched from this platform."}']);
    expect(posted.map((p) => p.text)).toEqual(['done\n\n_(a.txt was not read: files cannot be fetched from this platform.)_']);
  });

  it('refuses whom the allow-lists leave out, privately, and runs no turn for them', async () => {
    const inbox = new MemoryInbox();
    const { outbound, refused } = recordingOutbound();
    const pipeline = pipelineOver(inbox, { runTurn: () => Promise.reject(new Error('no turn may run')) });
    pipeline.register('test', outbound, { users: ['U1'] });
    expect(await pipeline.handleIncoming(message('m1', 'hi', 't1', 'U2'))).toEqual({ status: 'refused' });
    expect(refused).toEqual(['m1']);
    expect(inbox.rows).toMatchObject([{ status: 'refused' }]);
  });

  it('does not acknowledge a message it could not store', async () => {
    const inbox = new MemoryInbox();
    inbox.failRecords = true;
    const pipeline = pipelineOver(inbox, heldTurns().runner);
    pipeline.register('test', recordingOutbound().outbound);
    let acknowledged = false;
    const handled = pipeline.handleIncoming(message('m1', 'hi'), { acknowledge: async () => void (acknowledged = true) });
    await expect(handled).rejects.toBeInstanceOf(NotRecordedError);
    expect(acknowledged).toBe(false);
  });

  it('tells the user a turn failed once its attempts are spent, and goes on with the lane', async () => {
    const inbox = new MemoryInbox();
    const { outbound, posted, replyFollowed } = recordingOutbound();
    let calls = 0;
    const runner: TurnRunner = { runTurn: async (_c, text) => (calls++ === 0 ? Promise.reject(new Error('boom')) : { reply: `ok ${text}`, status: 'ok' }) };
    const pipeline = pipelineOver(inbox, runner, 1);
    pipeline.register('test', outbound);
    const failed = await pipeline.handleIncoming(message('m1', 'one'), { waitForReply: true });
    const next = await pipeline.handleIncoming(message('m2', 'two'), { waitForReply: true });
    expect(failed.status === 'accepted' && (await failed.answered)).toBe('failed');
    expect(next.status === 'accepted' && (await next.answered)).toBe('ok');
    expect(posted.map((p) => p.text)).toEqual([FAILURE_REPLY, 'ok two']);
    expect(inbox.rows.map((r) => r.status)).toEqual(['failed', 'answered']);
    // The failed turn's indicator is ended outright; the answered one's is left to its reply.
    expect(replyFollowed).toEqual([false, true]);
  });

  it('posts a reply stored before a crash without running its turn again', async () => {
    const inbox = new MemoryInbox();
    const entry = (await inbox.record(message('m1', 'asked before the crash'), false))!;
    await inbox.saveReply(entry.id, [{ text: 'stored ' }, { text: 'reply' }]);
    const { outbound, posted } = recordingOutbound();
    const pipeline = pipelineOver(inbox, { runTurn: () => Promise.reject(new Error('the turn ran again')) });
    pipeline.register('test', outbound);
    pipeline.start();
    await until(() => inbox.rows[0]!.status !== 'pending');
    await pipeline.stop(0);
    expect(inbox.rows[0]!.status).toBe('answered');
    expect(posted.map((p) => p.text)).toEqual(['stored ', 'reply']);
  });
});

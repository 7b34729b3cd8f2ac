import { describe, expect, it } from 'vitest';
import {
  FAILURE_REPLY,
  fileRefusedNote,
  DeliveryEngine,
  NOTHING_TO_READ_REPLY,
  type DeliveryOptions,
} from './engine.ts';
import type { DeliveryDeps } from './engine-options.ts';
import {
  FileRefusedError,
  NotRecordedError,
  type InboundMessage,
} from '../../ports/platform/delivery.ts';
import type { Outbound, OutgoingChunk } from '../../ports/platform/platform.ts';
import type { PromptPort } from '../../ports/prompts.ts';
import type { TurnResult, TurnRunner } from '../../ports/turns.ts';
import { silentLogger } from '../../../../test/support/logger.ts';
import {
  MemoryApprovals,
  MemoryLedger,
  MemoryQuestions,
} from '../../../../test/support/memory-store.ts';

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
  return {
    runner,
    started,
    answer: (text: string) => release.get(text)!({ reply: `re: ${text}`, status: 'ok' }),
  };
}

const message = (key: string, text: string, thread = 't1', user = 'U1'): InboundMessage => ({
  lane: { platform: 'test', workspace: 'W', channel: 'C', thread },
  messageKey: key,
  kind: 'message',
  user,
  text,
  delivery: {},
});

function pipelineOver(
  inbox: MemoryLedger,
  agent: TurnRunner,
  maxAttempts = 3,
  options: Partial<DeliveryOptions> = {},
  deps: Partial<DeliveryDeps> = {},
) {
  const files = { read: async () => ({ content: 'a file', isError: false }) };
  return new DeliveryEngine(
    {
      agent,
      ledger: inbox,
      search: { searchHistory: async () => [], storedResult: async () => undefined },
      files,
      approvals: new MemoryApprovals(),
      questions: new MemoryQuestions(),
      logger: silentLogger,
      ...deps,
    },
    {
      holder: 'me',
      leaseMs: 5_000,
      pollMs: 50,
      maxAttempts,
      files: { maxBytes: 1_000, maxPerMessage: 2 },
      replyFileChars: 8_000,
      approvalTimeoutMs: 600_000,
      questionTimeoutMs: 600_000,
      ...options,
    },
  );
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
};

describe('DeliveryEngine over an in-memory inbox', () => {
  it('stores a message once, answers a lane in arrival order one at a time, and posts each reply in chunks', async () => {
    const inbox = new MemoryLedger();
    const turns = heldTurns();
    const { outbound, posted } = recordingOutbound();
    const pipeline = pipelineOver(inbox, turns.runner);
    pipeline.register('test', outbound);
    const first = await pipeline.handleIncoming(message('m1', 'first question'), {
      waitForReply: true,
    });
    expect(await pipeline.handleIncoming(message('m1', 'first question'))).toEqual({
      status: 'duplicate',
    });
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
      const inbox = new MemoryLedger();
      const { outbound, posted } = recordingOutbound();
      const pipeline = pipelineOver(inbox, {
        runTurn: async () => ({ reply: long, status: 'ok' }),
      });
      pipeline.register('test', { ...outbound, postsFiles });
      const handled = await pipeline.handleIncoming(message('m1', 'everything'), {
        waitForReply: true,
      });
      expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
      if (postsFiles)
        expect(posted).toEqual([
          {
            inboxId: '1',
            seq: 0,
            text: expect.stringContaining('8,001 characters'),
            file: { name: 'reply-1.md', content: long, language: 'markdown' },
            // The answer's last message, which carries its 👍 and 👎 where the platform shows them.
            feedback: true,
          },
        ]);
      else {
        expect(posted.map((p) => p.text).join('')).toBe(long);
        expect(posted.map((p) => p.feedback ?? false)).toEqual([
          ...posted.slice(1).map(() => false),
          true,
        ]);
      }
    }
  });

  it("hands a message's files to its turn, and names below the reply each one it could not read", async () => {
    const inbox = new MemoryLedger();
    const { outbound, posted } = recordingOutbound();
    const read: string[] = [];
    const agent: TurnRunner = {
      runTurn: async (_c, _text, options) => {
        for (const file of (await options?.files?.()) ?? [])
          read.push(`${file.name}: ${file.outcome.content}`);
        return { reply: 'done', status: 'ok' };
      },
    };
    const pipeline = pipelineOver(inbox, agent);
    pipeline.register('test', { ...outbound, render: (reply) => [reply] });
    const files = [
      { name: 'a.txt', mimeType: 'text/plain', sizeBytes: 5, url: 'https://files.example/a.txt' },
    ];
    const handled = await pipeline.handleIncoming(
      { ...message('m1', 'see this'), files },
      { waitForReply: true },
    );
    expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
    expect(read).toEqual([
      'a.txt: {"error":"The shared file \\"a.txt\\" was not read: files cannot be fetched from this platform."}',
    ]);
    expect(posted.map((p) => p.text)).toEqual([
      'done\n\n_(a.txt was not read: files cannot be fetched from this platform.)_',
    ]);
  });

  it('refuses whom the allow-lists leave out, privately, and runs no turn for them', async () => {
    const inbox = new MemoryLedger();
    const { outbound, refused } = recordingOutbound();
    const pipeline = pipelineOver(inbox, {
      runTurn: () => Promise.reject(new Error('no turn may run')),
    });
    pipeline.register('test', outbound, { users: ['U1'] });
    expect(await pipeline.handleIncoming(message('m1', 'hi', 't1', 'U2'))).toEqual({
      status: 'refused',
    });
    expect(refused).toEqual(['m1']);
    expect(inbox.rows).toMatchObject([{ status: 'refused' }]);
  });

  it('does not acknowledge a message it could not store', async () => {
    const inbox = new MemoryLedger();
    inbox.failRecords = true;
    const pipeline = pipelineOver(inbox, heldTurns().runner);
    pipeline.register('test', recordingOutbound().outbound);
    let acknowledged = false;
    const handled = pipeline.handleIncoming(message('m1', 'hi'), {
      acknowledge: async () => void (acknowledged = true),
    });
    await expect(handled).rejects.toBeInstanceOf(NotRecordedError);
    expect(acknowledged).toBe(false);
  });

  it('tells the user a turn failed once its attempts are spent, and goes on with the lane', async () => {
    const inbox = new MemoryLedger();
    const { outbound, posted, replyFollowed } = recordingOutbound();
    let calls = 0;
    const runner: TurnRunner = {
      runTurn: async (_c, text) =>
        calls++ === 0 ? Promise.reject(new Error('boom')) : { reply: `ok ${text}`, status: 'ok' },
    };
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
    const inbox = new MemoryLedger();
    const entry = (await inbox.record(message('m1', 'asked before the crash'), false))!;
    await inbox.saveReply(entry.id, [{ text: 'stored ' }, { text: 'reply' }]);
    const { outbound, posted } = recordingOutbound();
    const pipeline = pipelineOver(inbox, {
      runTurn: () => Promise.reject(new Error('the turn ran again')),
    });
    pipeline.register('test', outbound);
    pipeline.start();
    await until(() => inbox.rows[0]!.status !== 'pending');
    await pipeline.stop(0);
    expect(inbox.rows[0]!.status).toBe('answered');
    expect(posted.map((p) => p.text)).toEqual(['stored ', 'reply']);
  });

  it('claims each post under the lease first, but a reply it stored just now: its save claimed the first', async () => {
    const inbox = new MemoryLedger();
    const claimed: string[] = [];
    const claimPost = inbox.claimPost.bind(inbox);
    inbox.claimPost = (chunkId, lease, leaseMs) => {
      claimed.push(chunkId);
      return claimPost(chunkId, lease, leaseMs);
    };
    const { outbound, posted } = recordingOutbound();
    const pipeline = pipelineOver(inbox, {
      runTurn: async (_c, text) => ({ reply: `${text}, answered in three parts`, status: 'ok' }),
    });
    pipeline.register('test', outbound);
    const asked = await pipeline.handleIncoming(message('m1', 'fresh'), { waitForReply: true });
    expect(asked.status === 'accepted' && (await asked.answered)).toBe('ok');
    const fresh = await inbox.replyOf(inbox.rows[0]!.id);
    expect(fresh.map((c) => c.seq)).toEqual([0, 1, 2]);
    expect(claimed).toEqual(fresh.slice(1).map((c) => c.id));

    // Stored by an earlier attempt: every post is claimed, the first too.
    claimed.length = 0;
    const entry = (await inbox.record(message('m2', 'asked before a crash', 't2'), false))!;
    const stored = await inbox.saveReply(entry.id, [{ text: 'stored ' }, { text: 'reply' }]);
    pipeline.start();
    await until(() => inbox.rows[1]!.status !== 'pending');
    await pipeline.stop(0);
    expect(claimed).toEqual(stored.map((c) => c.id));
    expect(posted.slice(-2).map((p) => p.text)).toEqual(['stored ', 'reply']);
  });

  it('drops a message that can never be stored, naming why, and stores nothing of it', async () => {
    const inbox = new MemoryLedger();
    const pipeline = pipelineOver(inbox, {
      runTurn: () => Promise.reject(new Error('no turn may run')),
    });
    pipeline.register('test', recordingOutbound().outbound);
    const noChannel = {
      ...message('m1', 'hi'),
      lane: {
        platform: 'test',
        workspace: 'W',
        channel: undefined as unknown as string,
        thread: 't1',
      },
    };
    expect(await pipeline.handleIncoming(noChannel)).toEqual({
      status: 'malformed',
      problems: ['no channel'],
    });
    expect(inbox.rows).toEqual([]);
  });

  it("answers an app's message only where the channel's policy lets apps in", async () => {
    const inbox = new MemoryLedger();
    const { outbound, posted } = recordingOutbound();
    const policy = { rules: [{ match: { channel: 'C-bots' }, apps: true }] };
    const pipeline = pipelineOver(
      inbox,
      { runTurn: async (_c, text) => ({ reply: `re: ${text}`, status: 'ok' }) },
      3,
      { policy },
    );
    pipeline.register('test', outbound);
    expect(
      await pipeline.handleIncoming({ ...message('m1', 'from a workflow'), fromApp: true }),
    ).toEqual({ status: 'ignored' });
    const allowed = await pipeline.handleIncoming(
      {
        ...message('m2', 'from a workflow'),
        lane: { platform: 'test', workspace: 'W', channel: 'C-bots', thread: 't' },
        fromApp: true,
      },
      { waitForReply: true },
    );
    expect(allowed.status === 'accepted' && (await allowed.answered)).toBe('ok');
    expect(posted.map((p) => p.text).join('')).toBe('re: from a workflow');
    expect(inbox.rows).toHaveLength(1);
  });

  it('says so, once and without a turn, when a message has no words and no files', async () => {
    const inbox = new MemoryLedger();
    const { outbound, posted } = recordingOutbound();
    const pipeline = pipelineOver(inbox, {
      runTurn: () => Promise.reject(new Error('no turn may run')),
    });
    pipeline.register('test', { ...outbound, render: (reply) => [reply] });
    const handled = await pipeline.handleIncoming(message('m1', '  '), { waitForReply: true });
    expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
    expect(await pipeline.handleIncoming(message('m1', '  '))).toEqual({ status: 'duplicate' });
    expect(posted.map((p) => p.text)).toEqual([NOTHING_TO_READ_REPLY]);
  });

  it('posts a reply whose file the platform refuses as messages in its place, with a line saying why, each once', async () => {
    const long = `# Report\n\n${'line of the report\n'.repeat(500)}`;
    const inbox = new MemoryLedger();
    const { outbound, posted } = recordingOutbound();
    const refusing: Outbound = {
      ...outbound,
      postsFiles: true,
      render: (reply) => reply.match(/[^]{1,4000}/g) ?? [''],
      post: async (m, chunk) => {
        if (chunk.file) throw new FileRefusedError('Slack said missing_scope');
        return outbound.post(m, chunk);
      },
    };
    const pipeline = pipelineOver(inbox, { runTurn: async () => ({ reply: long, status: 'ok' }) });
    pipeline.register('test', refusing);
    const handled = await pipeline.handleIncoming(message('m1', 'the report'), {
      waitForReply: true,
    });
    expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
    const text = posted.map((p) => p.text).join('');
    expect(text).toBe(`${long}\n\n_(${fileRefusedNote('Slack said missing_scope')})_`);
    // The first message takes the file's place: where the reply starts (Discord edits its deferral
    // with it).
    expect(posted.map((p) => p.seq)).toEqual([0, 1, 2]);
    // What is stored is what was posted: a resumed delivery finds the messages, not the file.
    const stored = await inbox.replyOf('1');
    expect(stored.map((c) => [c.seq, Boolean(c.file), Boolean(c.platformMessageId)])).toEqual([
      [0, false, true],
      [1, false, true],
      [2, false, true],
    ]);
  });
});

describe('links to the whole results a turn previewed', () => {
  const previewed = [{ toolCallId: 'call_a1', toolName: 'listing' }];
  const page = (toolCallId: string) => `https://spool.test/web/results/${toolCallId}`;
  const answered = async (pipeline: DeliveryEngine, key: string) => {
    const handled = await pipeline.handleIncoming(message(key, 'list it'), { waitForReply: true });
    expect(handled.status === 'accepted' && (await handled.answered)).toBe('ok');
  };

  it("go under the reply's last message, with its feedback, where results have a page; nowhere without one", async () => {
    const reply = 'the listing has 2,000 lines';
    const turn: TurnRunner = { runTurn: async () => ({ reply, status: 'ok', previewed }) };
    const linked = recordingOutbound();
    const pipeline = pipelineOver(new MemoryLedger(), turn, 3, { resultPage: page });
    pipeline.register('test', linked.outbound);
    await answered(pipeline, 'm1');
    expect(linked.posted.map((p) => [p.text, p.links, p.feedback])).toEqual([
      ['the listin', undefined, undefined],
      ['g has 2,00', undefined, undefined],
      [
        '0 lines',
        [{ label: 'View the whole result', url: 'https://spool.test/web/results/call_a1' }],
        true,
      ],
    ]);
    await pipeline.stop(0);

    const plain = recordingOutbound();
    const unlinked = pipelineOver(new MemoryLedger(), turn);
    unlinked.register('test', plain.outbound);
    await answered(unlinked, 'm1');
    expect(plain.posted.map((p) => p.text).join('')).toBe(reply);
    expect(plain.posted.some((p) => p.links)).toBe(false);
    await unlinked.stop(0);
  });

  it('come with a stored result a person asks for, where results have a page', async () => {
    const search = {
      searchHistory: async () => [],
      storedResult: async () => ({ toolName: 'listing', content: 'everything' }),
    };
    const who = { lane: message('m1', '').lane, user: 'U1' };
    const linked = pipelineOver(new MemoryLedger(), turnNever, 3, { resultPage: page }, { search });
    linked.register('test', recordingOutbound().outbound);
    expect(await linked.result(who, 'call_a1')).toEqual({
      toolName: 'listing',
      content: 'everything',
      link: { label: 'View the whole result', url: page('call_a1') },
    });
    const unlinked = pipelineOver(new MemoryLedger(), turnNever, 3, {}, { search });
    unlinked.register('test', recordingOutbound().outbound);
    expect(await unlinked.result(who, 'call_a1')).toEqual({
      toolName: 'listing',
      content: 'everything',
    });
  });
});

const turnNever: TurnRunner = { runTurn: () => Promise.reject(new Error('no turn may run')) };

describe('prompts under a channel policy', () => {
  it("neither lists nor fetches the prompts of a server the channel's tools leave out", async () => {
    const rendered: string[] = [];
    const prompts: PromptPort = {
      list: () => [
        { server: 'fs', name: 'tour', arguments: [] },
        { server: 'github', name: 'review', arguments: [] },
      ],
      render: async (server, name) => {
        rendered.push(`${server}/${name}`);
        return `${server} says ${name}`;
      },
    };
    const engine = new DeliveryEngine(
      {
        agent: heldTurns().runner,
        ledger: new MemoryLedger(),
        search: { searchHistory: async () => [], storedResult: async () => undefined },
        files: { read: async () => ({ content: '', isError: false }) },
        approvals: new MemoryApprovals(),
        questions: new MemoryQuestions(),
        prompts,
        logger: silentLogger,
      },
      {
        holder: 'me',
        leaseMs: 5_000,
        pollMs: 50,
        maxAttempts: 3,
        files: { maxBytes: 1_000, maxPerMessage: 2 },
        replyFileChars: 8_000,
        approvalTimeoutMs: 600_000,
        questionTimeoutMs: 600_000,
        policy: { rules: [{ match: { channel: 'C' }, tools: ['fs__*', 'get_continuation'] }] },
      },
    );
    engine.register('test', recordingOutbound().outbound);
    const here = { lane: message('x', '').lane, user: 'U1' };
    const list = await engine.promptText(here, '');
    expect('problem' in list && list.problem).toContain('tour');
    expect('problem' in list && list.problem).not.toContain('review');
    const refused = await engine.promptText(here, 'github review');
    expect('problem' in refused && refused.problem).toMatch(/review/);
    expect(rendered).toEqual([]);
    expect(await engine.promptText(here, 'fs tour')).toEqual({ text: 'fs says tour' });
    // Elsewhere, no rule: every server's prompts.
    const elsewhere = { lane: { ...here.lane, channel: 'D' }, user: 'U1' };
    expect(await engine.promptText(elsewhere, 'github review')).toEqual({
      text: 'github says review',
    });
    expect(rendered).toEqual(['fs/tour', 'github/review']);
  });
});

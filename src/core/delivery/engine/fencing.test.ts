import { expect, it } from 'vitest';
import { DeliveryEngine } from './engine.ts';
import type { DeliveryPort } from '../../ports/platform/delivery.ts';
import type { Outbound, OutgoingChunk } from '../../ports/platform/platform.ts';
import type { TurnResult, TurnRunner } from '../../ports/turns.ts';
import { RecordingLogger } from '../../../../test/support/logger.ts';
import {
  MemoryApprovals,
  MemoryLedger,
  MemoryQuestions,
} from '../../../../test/support/memory-store.ts';

/** A replica: its own holder name, platform and turns, over the shared ledger. */
function replica(ledger: DeliveryPort, holder: string, leaseMs: number, agent: TurnRunner) {
  const posted: OutgoingChunk[] = [];
  const outbound: Outbound = {
    render: (reply) => [reply],
    post: async (_message, chunk) => {
      posted.push(chunk);
      return `${holder}-${posted.length}`;
    },
    refuse: async () => {},
    showWorking: async () => async () => {},
  };
  const logger = new RecordingLogger();
  const engine = new DeliveryEngine(
    {
      agent,
      ledger,
      search: { searchHistory: async () => [], storedResult: async () => undefined },
      files: { read: async () => ({ content: '', isError: false }) },
      approvals: new MemoryApprovals(),
      questions: new MemoryQuestions(),
      logger,
    },
    {
      holder,
      leaseMs,
      pollMs: 20,
      maxAttempts: 3,
      files: { maxBytes: 1_000, maxPerMessage: 2 },
      replyFileChars: 8_000,
      approvalTimeoutMs: 600_000,
      questionTimeoutMs: 600_000,
    },
  );
  engine.register('test', outbound);
  return { engine, posted, logger };
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

it('a replica whose lane was taken over while its turn ran posts and stores nothing of it', async () => {
  const ledger = new MemoryLedger();
  // Replica A cannot reach the database for its heartbeat: its lease runs out, and it works on.
  const unrenewed = new Proxy(ledger, {
    get(target, name) {
      if (name === 'renew') return () => Promise.reject(new Error('connection refused'));
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
  let finishA!: (result: TurnResult) => void;
  const a = replica(unrenewed, 'a', 30, {
    runTurn: () => new Promise((resolve) => (finishA = resolve)),
  });
  const b = replica(ledger, 'b', 60_000, {
    runTurn: async () => ({ reply: 'from B', status: 'ok' }),
  });
  try {
    await a.engine.handleIncoming({
      lane: { platform: 'test', workspace: 'W', channel: 'C', thread: 't1' },
      messageKey: 'm1',
      kind: 'message',
      user: 'U1',
      text: 'hello',
      delivery: {},
    });
    await until(() => finishA !== undefined);
    // B takes the lane over once A's lease ran out, and answers.
    b.engine.start();
    await until(() => b.posted.length === 1);
    expect(ledger.rows.map((r) => r.status)).toEqual(['answered']);
    // A's turn ends now: its reply is refused, and A leaves the message to B.
    finishA({ reply: 'from A', status: 'ok' });
    await until(() => a.logger.lines.some((l) => l.message.startsWith('The lane was taken over')));
    expect(a.posted).toEqual([]);
    expect(b.posted.map((p) => p.text)).toEqual(['from B']);
    expect(ledger.chunks.get(ledger.rows[0]!.id)!.map((c) => c.text)).toEqual(['from B']);
    expect(a.logger.lines.filter((l) => l.level === 'error')).toEqual([]);
  } finally {
    await Promise.all([a.engine.stop(0), b.engine.stop(0)]);
  }
});

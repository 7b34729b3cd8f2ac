import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../ports/platform/platform.ts';
import { answerClick, buttonId, clickOf, NOTHING_TO_STOP, type SpoolClick } from './clicks.ts';

const who = {
  lane: { platform: 'discord', workspace: 'g', channel: 'c', thread: 'main' },
  user: 'u',
};
const words = { platform: 'discord', refusal: 'not here' };

describe('button ids', () => {
  it('reads back every click it writes', () => {
    const clicks: SpoolClick[] = [
      { kind: 'approval', toolCallId: 'call:1', approve: true },
      { kind: 'approval', toolCallId: 'call:1', approve: false },
      { kind: 'form', questionId: 'q1', action: 'accept' },
      { kind: 'form', questionId: 'q1', action: 'cancel' },
      { kind: 'stop', messageKey: '1234' },
      { kind: 'feedback', inboxId: '42', rating: 'up' },
      { kind: 'feedback', inboxId: '42', rating: 'down' },
    ];
    for (const click of clicks) expect(clickOf(buttonId(click))).toEqual(click);
    expect(buttonId(clicks[0]!)).toBe('spool:approve:call:1');
  });

  it("takes no button that is not Spool's", () => {
    expect(clickOf('other:approve:1')).toBeUndefined();
    expect(clickOf('spool:form:q1')).toBeUndefined();
  });
});

describe('answerClick', () => {
  const delivery = (calls: unknown[]) =>
    ({
      stopTurn: async (...args: unknown[]) => (calls.push(['stop', ...args]), 'nothing'),
      decideApproval: async (click: unknown) => (calls.push(click), { status: 'decided' }),
      answerForm: async (click: unknown) => (calls.push(click), { status: 'not_allowed' }),
    }) as unknown as Delivery;

  it('says so when there is nothing to stop, and nothing for a decision taken', async () => {
    const calls: unknown[] = [];
    expect(await answerClick(delivery(calls), who, { kind: 'stop', messageKey: 'm' }, words)).toBe(
      NOTHING_TO_STOP,
    );
    const approval = { kind: 'approval', toolCallId: 't', approve: true } as const;
    expect(await answerClick(delivery(calls), who, approval, words)).toBeUndefined();
    expect(calls).toEqual([['stop', who, 'm'], { ...who, toolCallId: 't', approve: true }]);
  });

  it('sends values only with an answer that has them', async () => {
    const calls: unknown[] = [];
    const decline = { kind: 'form', questionId: 'q', action: 'decline' } as const;
    expect(await answerClick(delivery(calls), who, decline, words)).toMatch(/Only the person/);
    expect(calls).toEqual([{ ...who, questionId: 'q', action: 'decline' }]);
  });
});

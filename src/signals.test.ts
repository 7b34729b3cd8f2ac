import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { followingSignal } from './signals.ts';

describe('followingSignal', () => {
  it("aborts with its source's reason while it follows, and leaves no listener once released", () => {
    const source = new AbortController();
    const first = followingSignal(source.signal);
    const second = followingSignal(source.signal);
    expect(getEventListeners(source.signal, 'abort')).toHaveLength(2);
    second.release();
    expect(getEventListeners(source.signal, 'abort')).toHaveLength(1);
    source.abort('stopped');
    expect([first.signal.aborted, first.signal.reason]).toEqual([true, 'stopped']);
    expect(second.signal.aborted).toBe(false);
  });

  it('starts aborted from an aborted source', () => {
    const source = AbortSignal.abort('gone');
    const { signal } = followingSignal(source);
    expect([signal.aborted, signal.reason]).toEqual([true, 'gone']);
  });
});

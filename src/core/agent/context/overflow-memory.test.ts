import { afterEach, describe, expect, it, vi } from 'vitest';
import { OverflowMemory } from './overflow-memory.ts';

afterEach(() => vi.useRealTimers());

describe('OverflowMemory', () => {
  it('remembers a level for its time, forgets level 0 at once, and then starts over', () => {
    vi.useFakeTimers();
    const memory = new OverflowMemory(1_000);
    memory.remember('a', 2);
    memory.remember('b', 1);
    memory.remember('b', 0);
    expect([memory.levelFor('a'), memory.levelFor('b'), memory.levelFor('c')]).toEqual([2, 0, 0]);
    vi.advanceTimersByTime(1_001);
    expect(memory.levelFor('a')).toBe(0);
  });

  it('keeps at most its number of conversations, forgetting the least recently remembered', () => {
    const memory = new OverflowMemory(60_000, 2);
    memory.remember('a', 1);
    memory.remember('b', 1);
    memory.remember('a', 2);
    memory.remember('c', 1);
    expect([memory.levelFor('a'), memory.levelFor('b'), memory.levelFor('c')]).toEqual([2, 0, 1]);
  });
});

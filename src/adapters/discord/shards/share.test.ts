import { describe, expect, it } from 'vitest';
import { shareAt, shareMoves } from './share.ts';

const holding = (entries: Array<[number, string]>) => new Map(entries);

describe('shareMoves', () => {
  it('one replica takes every shard, lowest first', () => {
    expect(
      shareMoves({ shardCount: 4, replicas: ['a'], me: 'a', held: [], holders: new Map() }),
    ).toEqual({ take: [0, 1, 2, 3], hand: [] });
  });

  it('splits evenly, the first ranks taking the remainder', () => {
    expect([0, 1, 2].map((rank) => shareAt(7, 3, rank))).toEqual([3, 2, 2]);
    expect([0, 1, 2].map((rank) => shareAt(2, 3, rank))).toEqual([1, 1, 0]);
    for (let count = 1; count <= 16; count++)
      for (let replicas = 1; replicas <= 5; replicas++) {
        const shares = Array.from({ length: replicas }, (_, rank) =>
          shareAt(count, replicas, rank),
        );
        expect(shares.reduce((a, b) => a + b)).toBe(count);
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      }
  });

  it('a replica joining: the holder of all hands its highest over, the newcomer takes what is free', () => {
    const all = holding([
      [0, 'a'],
      [1, 'a'],
      [2, 'a'],
      [3, 'a'],
    ]);
    expect(
      shareMoves({
        shardCount: 4,
        replicas: ['a', 'b'],
        me: 'a',
        held: [0, 1, 2, 3],
        holders: all,
      }),
    ).toEqual({ take: [], hand: [3, 2] });
    // Nothing is free yet: the newcomer waits for the hand-over.
    expect(
      shareMoves({ shardCount: 4, replicas: ['a', 'b'], me: 'b', held: [], holders: all }),
    ).toEqual({ take: [], hand: [] });
    const handed = holding([
      [0, 'a'],
      [1, 'a'],
    ]);
    expect(
      shareMoves({ shardCount: 4, replicas: ['a', 'b'], me: 'b', held: [], holders: handed }),
    ).toEqual({ take: [2, 3], hand: [] });
  });

  it('a replica leaving: the one left takes its shards once their leases are no longer live', () => {
    expect(
      shareMoves({
        shardCount: 4,
        replicas: ['a'],
        me: 'a',
        held: [0, 1],
        holders: holding([
          [0, 'a'],
          [1, 'a'],
        ]),
      }),
    ).toEqual({ take: [2, 3], hand: [] });
  });
});

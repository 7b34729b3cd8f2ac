/**
 * Which shards a replica should hold: the count split evenly over the replicas alive, in their
 * fixed order (the first `count % replicas` take one more), and what it must do to get there.
 */
export interface ShareInput {
  shardCount: number;
  /** The replicas alive, this one among them, in the order every replica sees. */
  replicas: string[];
  me: string;
  /** The shards of the current count this replica holds now. */
  held: number[];
  /** Every shard with a live lease, and whose (this replica's included). */
  holders: ReadonlyMap<number, string>;
}

export interface ShareMoves {
  /** Free shards to take, lowest first (Discord's identify buckets in order). */
  take: number[];
  /** Shards to hand over, highest first: more than this replica's share. */
  hand: number[];
}

/** How many of `shardCount` shards the replica at `rank` of `replicas` holds. */
export function shareAt(shardCount: number, replicas: number, rank: number): number {
  return Math.floor(shardCount / replicas) + (rank < shardCount % replicas ? 1 : 0);
}

/** Pure: the moves toward this replica's share. */
export function shareMoves(input: ShareInput): ShareMoves {
  const { shardCount, replicas, me, held, holders } = input;
  const rank = Math.max(0, replicas.indexOf(me));
  const share = shareAt(shardCount, Math.max(1, replicas.length), rank);
  const mine = [...held].sort((a, b) => a - b);
  if (mine.length > share) return { take: [], hand: mine.slice(share).reverse() };
  const free = [];
  for (let id = 0; id < shardCount && free.length < share - mine.length; id++)
    if (!holders.has(id) && !mine.includes(id)) free.push(id);
  return { take: free, hand: [] };
}

import type { OverflowLevel } from './request.ts';

/**
 * The overflow level each conversation last needed, for a while: its next requests start there
 * instead of paying one or two refused requests every turn. After `ttlMs` it tries the full
 * context again (old results have been compacted meanwhile). Bounded: the least recently used
 * conversation is forgotten first, which costs it at most one refused request.
 */
export class OverflowMemory {
  private readonly levels = new Map<string, { level: OverflowLevel; until: number }>();

  constructor(
    private readonly ttlMs = 10 * 60_000,
    private readonly maxConversations = 10_000,
  ) {}

  levelFor(conversationId: string): OverflowLevel {
    const remembered = this.levels.get(conversationId);
    return remembered && remembered.until > Date.now() ? remembered.level : 0;
  }

  remember(conversationId: string, level: OverflowLevel): void {
    this.levels.delete(conversationId);
    if (level === 0) return;
    this.levels.set(conversationId, { level, until: Date.now() + this.ttlMs });
    if (this.levels.size > this.maxConversations)
      this.levels.delete(this.levels.keys().next().value!);
  }
}

import type { CallRecord } from '../../core/ports/web/records.ts';
import { shapeOf, type ResultShape } from './result-shape.ts';

/**
 * The results read lately, with their shapes, so that the next page or a find does not read or
 * parse a large result again. A stored result never changes; the cache holds at most `maxChars`.
 */
export class ResultCache {
  private readonly entries = new Map<
    string,
    { call: CallRecord; shape: ResultShape; chars: number }
  >();
  private chars = 0;

  constructor(private readonly maxChars = 64_000_000) {}

  async get(
    id: string,
    read: (id: string) => Promise<CallRecord | undefined>,
  ): Promise<{ call: CallRecord; shape: ResultShape } | undefined> {
    const hit = this.entries.get(id);
    if (hit) {
      // The newest read goes last: the oldest is dropped first.
      this.entries.delete(id);
      this.entries.set(id, hit);
      return hit;
    }
    const call = await read(id);
    if (!call) return undefined;
    const shape = shapeOf(call.result?.content ?? '');
    const chars =
      (call.result?.content.length ?? 0) + (shape.kind === 'json' ? shape.pretty.length : 0);
    // Only a finished call's result is kept: one still running has none yet.
    if (call.result) {
      this.entries.set(id, { call, shape, chars });
      this.chars += chars;
      for (const [key, entry] of this.entries) {
        if (this.chars <= this.maxChars || key === id) break;
        this.entries.delete(key);
        this.chars -= entry.chars;
      }
    }
    return { call, shape };
  }
}

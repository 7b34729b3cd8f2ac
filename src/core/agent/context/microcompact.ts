import { clearedMarker } from '../../markers.ts';
import { buildPreview, originalLength } from '../results/preview.ts';
import { countLines } from '../../text.ts';
import type { Message } from '../../ports/conversation.ts';

export interface MicrocompactOptions {
  /** Results this many turns old or older are cut to head + tail. */
  truncateTurns: number;
  /** Results this many turns old or older are replaced by a one-line description. */
  summarizeTurns: number;
  /** Results no longer than this are left alone. */
  minChars: number;
  headChars: number;
  tailChars: number;
}

export function detectContentType(content: string): string {
  const text = content.trimStart();
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      JSON.parse(content);
      return 'JSON';
    } catch {
      // not JSON after all: fall through to the prefix checks
    }
  }
  if (text.startsWith('package ')) return 'Go source';
  if (text.startsWith('def ')) return 'Python source';
  if (text.startsWith('function')) return 'JavaScript source';
  if (text.startsWith('diff') || text.startsWith('---')) return 'diff';
  if (text.startsWith('commit ')) return 'git log';
  return 'text';
}

function formatChars(chars: number): string {
  return chars < 1000 ? `${chars} chars` : `${Math.round(chars / 1000)}K chars`;
}

export function clearedResultLine(toolCallId: string, content: string): string {
  const total = originalLength(content);
  const lines = total === content.length ? `${countLines(content)} lines, ` : '';
  return clearedMarker(toolCallId, `${lines}${formatChars(total)}, ${detectContentType(content)}`);
}

/**
 * Compacted forms already made, per message object and tier. A conversation's messages are the
 * same objects on every request of a turn and across turns (the store keeps transcripts in
 * memory), so a result is parsed and counted once per tier, not once per request.
 */
const compacted = new WeakMap<Message, Map<string, string>>();

function remembered(m: Message, tier: string, make: () => string): string {
  let forms = compacted.get(m);
  if (!forms) compacted.set(m, (forms = new Map()));
  let form = forms.get(tier);
  if (form === undefined) forms.set(tier, (form = make()));
  return form;
}

/**
 * Shrinks old tool results in the context sent to the model. The output for a given result
 * depends only on its content and age tier, so request prefixes stay byte-stable for prompt
 * caching until a result moves to the next tier. The outputs of `views` (pages, matches: see
 * `viewOfReading`) are left to the reading view.
 */
export function microcompact(
  messages: readonly Message[],
  currentTurn: number,
  options: MicrocompactOptions,
  views: ReadonlySet<string> = new Set(),
): Message[] {
  // Results move to their next tier together, every `truncateTurns` turns, rather than one turn's
  // at a time: each move changes the request near its start, which prompt caches then re-bill.
  const settled = currentTurn - ((currentTurn - 1) % Math.max(1, options.truncateTurns));
  return messages.map((m) => {
    if (m.role !== 'tool' || m.content.length <= options.minChars || views.has(m.toolCallId))
      return m;
    const age = settled - m.turn;
    if (age >= options.summarizeTurns)
      return {
        ...m,
        content: remembered(m, 'cleared', () => clearedResultLine(m.toolCallId, m.content)),
      };
    if (age >= options.truncateTurns) {
      const preview = remembered(m, `preview:${options.headChars}:${options.tailChars}`, () =>
        buildPreview(m.content, m.toolCallId, options),
      );
      return preview.length < m.content.length ? { ...m, content: preview } : m;
    }
    return m;
  });
}

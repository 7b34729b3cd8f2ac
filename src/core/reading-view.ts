import { inViewAboveNote, movedPastMarker, pageInViewMarker, pageLeftOutMarker, parsePage, previewSpans, viewCutMarker } from './markers.ts';
import { firstGap, subtract, unite, type Span } from './spans.ts';
import { codePointBoundary, headAtLineBreak } from './text.ts';
import type { Message, ToolCall } from './types.ts';

type Page = NonNullable<ReturnType<typeof parsePage>>;

/** Calls of derived tools (pages, matching lines, search hits), by id. */
export function derivedCalls(messages: readonly Message[]): Map<string, ToolCall> {
  const calls = new Map<string, ToolCall>();
  for (const m of messages) if (m.role === 'assistant') for (const c of m.toolCalls ?? []) if (c.derived) calls.set(c.id, c);
  return calls;
}

/** What `turn`'s pages, matches and hits add up to, as stored. */
export function readingChars(messages: readonly Message[], turn: number): number {
  const calls = derivedCalls(messages);
  return messages.reduce((n, m) => n + (m.role === 'tool' && m.turn === turn && calls.has(m.toolCallId) ? m.content.length : 0), 0);
}

/** The newest of `readings` (message indexes) that fit `budgetChars` together: the oldest give way first. */
function keptInView(messages: readonly Message[], readings: number[], budgetChars: number): Set<number> {
  const kept = new Set<number>();
  let used = 0;
  for (const i of [...readings].reverse()) {
    used += Math.min(messages[i]!.content.length, budgetChars);
    if (used > budgetChars) break;
    kept.add(i);
  }
  return kept;
}

function cutToFit(content: string, budgetChars: number): string {
  const head = headAtLineBreak(content, budgetChars);
  return `${head}\n${viewCutMarker(content.length - head.length)}`;
}

/** Of one result, in this request so far: what the model has in view, and what it read this turn. */
interface Seen {
  inView: Span[];
  read: Span[];
}

/** A page cut to the budget, without what the request shows already, and what is seen after it. */
function pageInView(page: Page, budgetChars: number, before: Seen): { content: string; seen: Seen } {
  const own: Span = [page.span[0], page.span[0] + codePointBoundary(page.text, budgetChars)];
  const parts: string[] = [];
  let at = own[0];
  for (const [a, b] of subtract(own, before.inView)) {
    if (a > at) parts.push(inViewAboveNote([at, a]));
    parts.push(page.text.slice(a - own[0], b - own[0]));
    at = b;
  }
  if (at < own[1]) parts.push(inViewAboveNote([at, own[1]]));
  const seen = { inView: unite([...before.inView, own]), read: unite([...before.read, own]) };
  // Read on into what was not read yet: pointing back at what gave way would go round in circles.
  parts.push(pageInViewMarker(page.toolCallId, own, seen, page.total, firstGap(seen.read, own[1], page.total)));
  return { content: parts.join('\n'), seen };
}

/**
 * What the model has in view of what it read. This turn's pages, matching lines and search hits
 * stay in the request while they fit `budgetChars`, the oldest giving way first; those of earlier
 * turns, like other old results, become one line that says how to read them again. A page
 * repeats nothing an earlier message shows, and its marker says how much of its result is now in
 * view. Each message depends only on those before it and on which gave way, so within a turn the
 * request grows by appending and keeps its prefix for prompt caches.
 */
export function viewOfReading(messages: readonly Message[], currentTurn: number, budgetChars: number): Message[] {
  const calls = derivedCalls(messages);
  const readings = messages.flatMap((m, i) => (m.role === 'tool' && m.turn === currentTurn && calls.has(m.toolCallId) ? [i] : []));
  const kept = keptInView(messages, readings, budgetChars);
  const seen = new Map<string, Seen>();
  const seenOf = (id: string) => seen.get(id) ?? { inView: [], read: [] };
  return messages.map((m, i) => {
    const call = m.role === 'tool' ? calls.get(m.toolCallId) : undefined;
    if (!call) {
      const preview = m.role === 'assistant' ? undefined : previewSpans(m.content);
      if (preview) {
        const { inView, read } = seenOf(preview.toolCallId);
        seen.set(preview.toolCallId, { inView: unite([...inView, ...preview.spans]), read: unite([...read, ...preview.spans]) });
      }
      return m;
    }
    const page = parsePage(m.content);
    if (!kept.has(i)) {
      if (page && m.turn === currentTurn) seen.set(page.toolCallId, { ...seenOf(page.toolCallId), read: unite([...seenOf(page.toolCallId).read, page.span]) });
      return { ...m, content: page ? pageLeftOutMarker(page.toolCallId, page.span) : movedPastMarker(call.name, call.arguments, m.content.length) };
    }
    if (!page) return m.content.length <= budgetChars ? m : { ...m, content: cutToFit(m.content, budgetChars) };
    const shown = pageInView(page, budgetChars, seenOf(page.toolCallId));
    seen.set(page.toolCallId, shown.seen);
    return { ...m, content: shown.content };
  });
}

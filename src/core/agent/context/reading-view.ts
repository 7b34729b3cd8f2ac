import {
  inViewAboveNote,
  movedPastMarker,
  pageInViewMarker,
  pageLeftOutMarker,
  parsePage,
  previewSpans,
  viewCutMarker,
} from '../../markers.ts';
import { firstGap, subtract, unite, type Span } from '../../spans.ts';
import { codePointBoundary, headAtLineBreak } from '../../text.ts';
import type { Message, ToolCall } from '../../ports/conversation.ts';

type Page = NonNullable<ReturnType<typeof parsePage>>;

/** Of one result, in the request so far: what the model has in view, and what it read this turn. */
interface Seen {
  inView: Span[];
  read: Span[];
}

/** Calls of derived tools (pages, matching lines, search hits), by id. */
export function derivedCalls(messages: readonly Message[]): Map<string, ToolCall> {
  const calls = new Map<string, ToolCall>();
  for (const m of messages)
    if (m.role === 'assistant')
      for (const c of m.toolCalls ?? []) if (c.derived) calls.set(c.id, c);
  return calls;
}

/** What `turn`'s pages, matches and hits add up to, as stored. */
export function readingChars(messages: readonly Message[], turn: number): number {
  const calls = derivedCalls(messages);
  return messages.reduce(
    (n, m) =>
      n + (m.role === 'tool' && m.turn === turn && calls.has(m.toolCallId) ? m.content.length : 0),
    0,
  );
}

/**
 * This turn's derived outputs (message indexes) that stay in view. Over `budgetChars` the oldest
 * give way, down to half the budget at once: the request then grows by appending again for a
 * while, instead of changing near its start, for prompt caches, on every page.
 */
function keptInView(
  messages: readonly Message[],
  calls: ReadonlyMap<string, ToolCall>,
  turn: number,
  budgetChars: number,
): Set<number> {
  const kept: number[] = [];
  const size = (i: number) => Math.min(messages[i]!.content.length, budgetChars);
  let used = 0;
  messages.forEach((m, i) => {
    if (m.role !== 'tool' || m.turn !== turn || !calls.has(m.toolCallId)) return;
    kept.push(i);
    used += size(i);
    if (used > budgetChars)
      while (kept.length > 1 && used > budgetChars / 2) used -= size(kept.shift()!);
  });
  return new Set(kept);
}

/**
 * Pages that are not in view, one line per result and turn: the first of them says which spans
 * gave way (by index), the others are dropped with their calls (by call id), so that a small
 * window reading a long result page by page does not fill up with lines about what it read.
 */
function pagesGivenWay(
  messages: readonly Message[],
  calls: ReadonlyMap<string, ToolCall>,
  kept: ReadonlySet<number>,
) {
  const first = new Map<string, { index: number; spans: Span[] }>();
  const dropped = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role !== 'tool' || !calls.has(m.toolCallId) || kept.has(i)) return;
    const page = parsePage(m.content);
    if (!page) return;
    const group = first.get(`${m.turn} ${page.toolCallId}`);
    if (!group) first.set(`${m.turn} ${page.toolCallId}`, { index: i, spans: [page.span] });
    else {
      group.spans.push(page.span);
      dropped.add(m.toolCallId);
    }
  });
  return { lines: new Map([...first.values()].map((g) => [g.index, unite(g.spans)])), dropped };
}

/** A page cut to the budget, without what the request shows already, and what is seen after it. */
function pageInView(
  page: Page,
  budgetChars: number,
  before: Seen,
): { content: string; seen: Seen } {
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
  parts.push(
    pageInViewMarker(
      page.toolCallId,
      own,
      seen,
      page.total,
      firstGap(seen.read, own[1], page.total),
    ),
  );
  return { content: parts.join('\n'), seen };
}

function cutToFit(content: string, budgetChars: number): string {
  const head = headAtLineBreak(content, budgetChars);
  return `${head}\n${viewCutMarker(content.length - head.length)}`;
}

/**
 * Messages without the dropped calls and their results; an assistant message left with neither
 * calls nor text goes too.
 */
function withoutCalls(messages: Message[], dropped: ReadonlySet<string>): Message[] {
  if (dropped.size === 0) return messages;
  return messages.flatMap((m): Message[] => {
    if (m.role === 'tool') return dropped.has(m.toolCallId) ? [] : [m];
    if (m.role !== 'assistant' || !m.toolCalls?.some((c) => dropped.has(c.id))) return [m];
    const toolCalls = m.toolCalls.filter((c) => !dropped.has(c.id));
    return toolCalls.length
      ? [{ ...m, toolCalls }]
      : m.content
        ? [{ role: 'assistant', content: m.content, turn: m.turn }]
        : [];
  });
}

/**
 * What the model has in view of what it read. This turn's pages, matching lines and search hits
 * stay in the request while they fit `budgetChars`, the oldest giving way first; those of earlier
 * turns, like other old results, become one line that says how to read them again. A page
 * repeats nothing an earlier message shows, and its marker says how much of its result is now in
 * view. Each message depends only on those before it and on which gave way, so within a turn the
 * request grows by appending and keeps its prefix for prompt caches.
 */
export function viewOfReading(
  messages: readonly Message[],
  currentTurn: number,
  budgetChars: number,
): Message[] {
  const calls = derivedCalls(messages);
  const kept = keptInView(messages, calls, currentTurn, budgetChars);
  const { lines, dropped } = pagesGivenWay(messages, calls, kept);
  const seen = new Map<string, Seen>();
  const see = (id: string, spans: readonly Span[], inView: boolean) => {
    const was = seen.get(id) ?? { inView: [], read: [] };
    seen.set(id, {
      inView: inView ? unite([...was.inView, ...spans]) : was.inView,
      read: unite([...was.read, ...spans]),
    });
  };
  const shown = messages.map((m, i): Message => {
    const call = m.role === 'tool' ? calls.get(m.toolCallId) : undefined;
    const page = call && parsePage(m.content);
    if (!call) {
      const preview = m.role === 'assistant' ? undefined : previewSpans(m.content);
      if (preview) see(preview.toolCallId, preview.spans, true);
      return m;
    }
    if (kept.has(i) && page) {
      const view = pageInView(
        page,
        budgetChars,
        seen.get(page.toolCallId) ?? { inView: [], read: [] },
      );
      seen.set(page.toolCallId, view.seen);
      return { ...m, content: view.content };
    }
    if (kept.has(i))
      return m.content.length <= budgetChars
        ? m
        : { ...m, content: cutToFit(m.content, budgetChars) };
    if (page && m.turn === currentTurn) see(page.toolCallId, [page.span], false);
    const gaveWay = lines.get(i);
    return {
      ...m,
      content: page
        ? gaveWay
          ? pageLeftOutMarker(page.toolCallId, gaveWay)
          : ''
        : movedPastMarker(call.name, call.arguments, m.content.length),
    };
  });
  return withoutCalls(shown, dropped);
}

import { clearedMarker, pastCallsNote } from '../../markers.ts';
import { buildPreview, originalLength } from '../results/preview.ts';
import { countLines } from '../../text.ts';
import type { Message, ToolCall } from '../../ports/conversation.ts';

export interface MicrocompactOptions {
  /** Results no longer than this stay whole in finished turns (a line about them is no shorter). */
  minChars: number;
  /**
   * Finished turns keep their calls in the request for at least this many turns (0: always); older
   * ones leave it this many turns at a time, for one line each in a note at its start.
   */
  horizonTurns: number;
  /** Under overflow, the current turn's results are cut to this head and tail. */
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
 * Compacted forms already made, per message object and form. A conversation's messages are the
 * same objects on every request of a turn and across turns (the store keeps transcripts in
 * memory), so a result is parsed once, not once per request; and each form is itself the same
 * object every time, so that what is done once per message object downstream (made well-formed,
 * counted in tokens) is not done again for every request of a long thread.
 */
const compacted = new WeakMap<Message, Map<string, Message>>();

function remembered(m: Message, form: string, make: () => Message): Message {
  let forms = compacted.get(m);
  if (!forms) compacted.set(m, (forms = new Map()));
  let made = forms.get(form);
  if (made === undefined) forms.set(form, (made = make()));
  return made;
}

/** An assistant message's text alone, its calls gone. */
const answerOnly = (m: Message): Message =>
  remembered(m, 'answer', () => ({ role: 'assistant', content: m.content, turn: m.turn }));

/**
 * The short id a finished turn's call goes by in requests: `t<turn>c<n>`, its turn and its place
 * among that turn's own (not derived) calls. Ids only pair a call with its result inside one
 * request, so a stored 37-char id, written three times for every old call, need not be sent; the
 * alias is alphanumeric, as the strictest servers want ids, and get_continuation takes it.
 */
const aliasOf = (turn: number, n: number) => `t${turn}c${n}`;
const ALIAS = /^t(\d+)c(\d+)$/;

/** Each finished turn's own calls by stored id, with their aliases; derived calls are left out. */
function finishedCalls(messages: readonly Message[], currentTurn: number) {
  const aliases = new Map<string, string>();
  const derived = new Set<string>();
  const counts = new Map<number, number>();
  for (const m of messages) {
    if (m.role !== 'assistant' || m.turn >= currentTurn) continue;
    for (const c of m.toolCalls ?? []) {
      if (c.derived) derived.add(c.id);
      else {
        const n = (counts.get(m.turn) ?? 0) + 1;
        counts.set(m.turn, n);
        aliases.set(c.id, aliasOf(m.turn, n));
      }
    }
  }
  return { aliases, derived };
}

/** The stored id an alias (`t<turn>c<n>`) stands for in `transcript`, if it is one. */
export function aliasedCallId(transcript: readonly Message[], id: string): string | undefined {
  const [, turn, n] = ALIAS.exec(id) ?? [];
  if (!turn) return undefined;
  const calls = transcript.flatMap((m): ToolCall[] =>
    m.role === 'assistant' && m.turn === Number(turn)
      ? (m.toolCalls ?? []).filter((c) => !c.derived)
      : [],
  );
  return calls[Number(n) - 1]?.id;
}

/** The most old calls the note at the start of a request names; search finds the rest. */
const NOTED_CALLS = 60;
/** Of a call's arguments, the most the note repeats. */
const NOTED_ARGS_CHARS = 120;

/**
 * The last turn whose calls have left the request: every `horizon` turns, the `horizon` turns
 * before the most recent `horizon` go at once, so the request changes near its start only then.
 */
export function pastHorizon(currentTurn: number, horizon: number): number {
  if (horizon <= 0) return 0;
  return Math.max(0, Math.floor((currentTurn - 1) / horizon) * horizon - horizon);
}

/**
 * Turns up to `past`, without their calls and results: what was asked and answered stays, and a
 * note at the start names each call that left, with the alias its result is read by.
 */
function withoutPastCalls(messages: readonly Message[], past: number): Message[] {
  if (past === 0) return [...messages];
  const lines: string[] = [];
  const kept = messages.flatMap((m): Message[] => {
    if (m.turn > past) return [m];
    if (m.role === 'tool') return [];
    if (m.role !== 'assistant' || !m.toolCalls?.length) return [m];
    for (const c of m.toolCalls)
      lines.push(`${c.id}: ${c.name} ${c.arguments.slice(0, NOTED_ARGS_CHARS)}`);
    return m.content ? [answerOnly(m)] : [];
  });
  if (lines.length === 0) return kept;
  const shown = lines.slice(-NOTED_CALLS);
  const note = pastCallsNote(shown, lines.length - shown.length);
  return [{ role: 'user', content: note, turn: messages[0]?.turn ?? 1 }, ...kept];
}

/**
 * Finished turns as every later request shows them: what was asked and answered, each call the
 * turn made under its alias with its result as one line that says how to read it again (a result
 * no longer than `minChars` stays whole), and the turn's pages, matches and hits gone with their
 * calls: the answer holds what the turn read from them, and the store keeps it all
 * (get_continuation, search_history). A turn takes this form once, when the next one starts, and
 * keeps it until its calls pass the horizon (`pastHorizon`): every request in between is the one
 * before with the newest turn appended, so prompt caches hold the whole prefix up to it.
 */
function compactFinishedTurns(
  messages: readonly Message[],
  currentTurn: number,
  minChars: number,
): Message[] {
  const { aliases, derived } = finishedCalls(messages, currentTurn);
  return messages.flatMap((m): Message[] => {
    if (m.turn >= currentTurn) return [m];
    if (m.role === 'tool') {
      if (derived.has(m.toolCallId)) return [];
      const alias = aliases.get(m.toolCallId);
      if (!alias) return [m];
      return [
        remembered(m, `${alias}:${minChars}`, () => ({
          ...m,
          toolCallId: alias,
          content: m.content.length <= minChars ? m.content : clearedResultLine(alias, m.content),
        })),
      ];
    }
    if (m.role !== 'assistant' || !m.toolCalls?.length) return [m];
    const kept = m.toolCalls.filter((c) => aliases.has(c.id));
    if (kept.length === 0) return m.content ? [answerOnly(m)] : [];
    const form = `calls:${kept.map((c) => aliases.get(c.id)).join(',')}`;
    const toolCalls = () =>
      kept.map((c) => ({ id: aliases.get(c.id)!, name: c.name, arguments: c.arguments }));
    return [remembered(m, form, () => ({ ...m, toolCalls: toolCalls() }))];
  });
}

/**
 * The current turn's results cut to head and tail, when the window could not take them (an
 * overflow level above 0). The outputs of `views` (pages, matches: see `viewOfReading`) are left
 * to the reading view.
 */
function cutCurrentTurn(
  messages: readonly Message[],
  currentTurn: number,
  options: MicrocompactOptions,
  views: ReadonlySet<string>,
): Message[] {
  return messages.map((m) => {
    if (m.role !== 'tool' || m.turn !== currentTurn || views.has(m.toolCallId)) return m;
    if (m.content.length <= options.minChars) return m;
    return remembered(m, `preview:${options.headChars}:${options.tailChars}`, () => {
      const preview = buildPreview(m.content, m.toolCallId, options);
      return preview.length < m.content.length ? { ...m, content: preview } : m;
    });
  });
}

/**
 * Shrinks tool results in the context sent to the model: finished turns always (see
 * `compactFinishedTurns`), the current turn's only when `cutCurrent` says the window needs it.
 * The output for a message depends only on it and its turn's calls, so requests stay byte-stable
 * for prompt caching. The store keeps every result whole.
 */
export function microcompact(
  messages: readonly Message[],
  currentTurn: number,
  options: MicrocompactOptions,
  { cutCurrent = false, views = new Set<string>() } = {},
): Message[] {
  const finished = withoutPastCalls(
    compactFinishedTurns(messages, currentTurn, options.minChars),
    pastHorizon(currentTurn, options.horizonTurns),
  );
  return cutCurrent ? cutCurrentTurn(finished, currentTurn, options, views) : finished;
}

import type { ChatRequest, ScriptedReply } from './fake-openai.ts';

type Call = NonNullable<ScriptedReply['toolCalls']>[number];

const READ_ON = /Read on with get_continuation\(tool_call_id="([^"]+)", offset=(\d+)\)/g;
const GAVE_WAY = /; ([\d, -]+) read earlier this turn, left out to fit the budget/;

/** All a request shows the model: what a scripted model may answer from, and nothing else. */
export const shownText = (request: ChatRequest): string => request.messages.map((m) => m.content ?? '').join('\n');

const SPOOL_NOTE = /\n?\[(?:truncated —|showing |\d+-\d+: in view above)[^\]\n]*\]\n?/g;

/** The tool results a request shows, read as one text: pages cut mid-line join up, as a model reads them. */
export const readText = (request: ChatRequest): string =>
  request.messages.map((m) => (m.role === 'tool' ? (m.content ?? '').replace(SPOOL_NOTE, '') : '')).join('');

/** The question being answered: the newest user message. */
export const question = (request: ChatRequest): string => request.messages.findLast((m) => m.role === 'user')?.content ?? '';

/**
 * A model that reads a whole document before it answers, as summarising does: it opens it
 * (`open`), follows each "Read on" to the end, and then answers from everything its request
 * shows: every line matching `wanted`, and what it could not hold, if something gave way. It
 * never knows where a fact is, so a fact it read and no longer sees is a fact it cannot give.
 */
export function readerModel(open: (question: string) => Call, wanted: RegExp): (request: ChatRequest) => ScriptedReply {
  return (request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'user') return { toolCalls: [open(last.content ?? '')] };
    const next = last.role === 'tool' ? [...(last.content ?? '').matchAll(READ_ON)].at(-1) : undefined;
    if (next) return { toolCalls: [{ id: 'read', name: 'get_continuation', arguments: JSON.stringify({ tool_call_id: next[1], offset: Number(next[2]) }) }] };
    const found = [...new Set(readText(request).match(wanted) ?? [])];
    const lost = GAVE_WAY.exec(last.content ?? '')?.[1];
    return { content: [...found, ...(lost ? [`I could not hold chars ${lost} of it.`] : [])].join('\n') || 'I found nothing.' };
  };
}

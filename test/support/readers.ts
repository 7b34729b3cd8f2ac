import { lastUserText, type ChatRequest, type ScriptedReply } from './fake-openai.ts';

type Call = NonNullable<ScriptedReply['toolCalls']>[number];

const READ_ON = /Read on with get_continuation\(tool_call_id="([^"]+)", offset=(\d+)\)/g;
/**
 * What the newest marker says the model holds: all of a result, some of it, or pages that were left
 * out.
 */
const HELD =
  /; you have (all \d+ chars of it|[\d, -]+ of \d+) in view|\[chars ([\d, -]+) of "[^"]+", read earlier, left out here/g;

/** All a request shows the model: what a scripted model may answer from, and nothing else. */
export const shownText = (request: ChatRequest): string =>
  request.messages.map((m) => m.content ?? '').join('\n');

const SPOOL_NOTE = /\n?\[(?:truncated —|showing |\d+-\d+: in view above)[^\]\n]*\]\n?/g;

/**
 * The tool results a request shows, read as one text: pages cut mid-line join up, as a model reads
 * them.
 */
export const readText = (request: ChatRequest): string =>
  request.messages
    .map((m) => (m.role === 'tool' ? (m.content ?? '').replace(SPOOL_NOTE, '') : ''))
    .join('');

/**
 * A model that reads a whole document before it answers, as summarising does: it opens it
 * (`open`), follows each "Read on" to the end, and then answers from everything its request
 * shows: every line matching `wanted`, and, when the newest marker says that not all of it is in
 * view (pages gave way, or the page cap came first), what it holds. It never knows where a
 * fact is, so a fact it read and no longer sees is a fact it cannot give.
 */
export function readerModel(
  open: (question: string) => Call,
  wanted: RegExp,
): (request: ChatRequest) => ScriptedReply {
  return (request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'user') return { toolCalls: [open(last.content ?? '')] };
    const next =
      last.role === 'tool' ? [...(last.content ?? '').matchAll(READ_ON)].at(-1) : undefined;
    if (next)
      return {
        toolCalls: [
          {
            id: 'read',
            name: 'get_continuation',
            arguments: JSON.stringify({ tool_call_id: next[1], offset: Number(next[2]) }),
          },
        ],
      };
    const found = [...new Set(readText(request).match(wanted) ?? [])];
    const held = [...shownText(request).matchAll(HELD)].at(-1);
    const partial =
      held &&
      (held[2]
        ? `${held[2]} of it were left out`
        : held[1]!.startsWith('all ')
          ? undefined
          : `I have ${held[1]} in view`);
    return {
      content:
        [...found, ...(partial ? [`I could not hold all of it: ${partial}.`] : [])].join('\n') ||
        'I found nothing.',
    };
  };
}

const offers = (request: ChatRequest, tool: string, parameter?: string) =>
  request.tools?.some(
    (t) =>
      t.function.name === tool &&
      (!parameter || JSON.stringify(t.function.parameters ?? {}).includes(`"${parameter}"`)),
  ) ?? false;
const callsThisTurn = (request: ChatRequest) =>
  request.messages
    .slice(request.messages.map((m) => m.role).lastIndexOf('user'))
    .flatMap((m) => m.tool_calls ?? []);

/** A fact as "FACT <name>: <value>": found in what the request shows, or not. */
const factIn = (text: string, name: string) =>
  new RegExp(`FACT ${name}: ([^\\n"\\\\]+)`).exec(text)?.[1];

/**
 * A model after one fact in a document (`In <path>, what is <name>?`): it opens the document and
 * answers if the fact shows; otherwise it searches the result with a pattern where the tool takes
 * one, follows "Read on" where that is all it has, and says so when it cannot see the fact.
 */
export function grepperModel(
  open: (path: string) => Call,
): (request: ChatRequest) => ScriptedReply {
  return (request) => {
    const [, path, name] = /^In (\S+), what is ([\w-]+)\?$/.exec(lastUserText(request)) ?? [];
    if (!path || !name) return { content: 'OK.' };
    const value = factIn(shownText(request), name) ?? factIn(readText(request), name);
    if (value) return { content: `${name} is ${value}` };
    const calls = callsThisTurn(request);
    const opened = calls.find((c) => c.function.arguments.includes(path));
    if (!opened) return { toolCalls: [open(path)] };
    if (
      offers(request, 'get_continuation', 'pattern') &&
      !calls.some((c) => c.function.arguments.includes('"pattern"'))
    ) {
      return {
        toolCalls: [
          {
            id: 'grep',
            name: 'get_continuation',
            arguments: JSON.stringify({
              tool_call_id: opened.id,
              offset: 0,
              pattern: `FACT ${name}:`,
            }),
          },
        ],
      };
    }
    const next = [...(request.messages.at(-1)!.content ?? '').matchAll(READ_ON)].at(-1);
    if (request.messages.at(-1)!.role === 'tool' && next)
      return {
        toolCalls: [
          {
            id: 'read',
            name: 'get_continuation',
            arguments: JSON.stringify({ tool_call_id: next[1], offset: Number(next[2]) }),
          },
        ],
      };
    return { content: `I cannot see ${name}.` };
  };
}

/**
 * A model asked about a fact from a document opened in an earlier turn (`Earlier you opened
 * <path>: what was <name>?`): it answers if the fact still shows, else searches the history
 * where it can, reads on from a hit's offset if the excerpt does not show the fact, and says so
 * when it cannot see it. Other messages (`Open <path>.`) open a document and say they did.
 */
export function searcherModel(
  open: (path: string) => Call,
): (request: ChatRequest) => ScriptedReply {
  return (request) => {
    const asked = lastUserText(request);
    const opening = /^Open (\S+)\.$/.exec(asked)?.[1];
    if (opening)
      return request.messages.at(-1)!.role === 'user'
        ? { toolCalls: [open(opening)] }
        : { content: 'Opened.' };
    const name = /what was ([\w-]+)\?$/.exec(asked)?.[1];
    if (!name) return { content: 'You are welcome.' };
    const value = factIn(shownText(request), name) ?? factIn(readText(request), name);
    if (value) return { content: `${name} is ${value}` };
    const calls = callsThisTurn(request);
    if (
      offers(request, 'search_history') &&
      !calls.some((c) => c.function.name === 'search_history')
    ) {
      return {
        toolCalls: [
          {
            id: 'search',
            name: 'search_history',
            arguments: JSON.stringify({ query: `FACT ${name}` }),
          },
        ],
      };
    }
    const hit =
      /read on from the match: get_continuation\(tool_call_id="([^"]+)", offset=(\d+)\)/.exec(
        request.messages.at(-1)!.content ?? '',
      );
    if (hit && !calls.some((c) => c.function.name === 'get_continuation')) {
      return {
        toolCalls: [
          {
            id: 'hit',
            name: 'get_continuation',
            arguments: JSON.stringify({ tool_call_id: hit[1], offset: Number(hit[2]) }),
          },
        ],
      };
    }
    return { content: `I cannot see ${name}.` };
  };
}

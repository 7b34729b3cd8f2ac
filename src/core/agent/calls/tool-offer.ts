import { parseToolArguments } from './arguments.ts';
import type { Message, ToolCall } from '../../ports/conversation.ts';
import type { SettingsReader } from '../../ports/settings.ts';
import type { ToolSpec } from '../../ports/tools.ts';

/**
 * Which tools' schemas a request carries. Under the threshold, every offered tool's. Past it, the
 * built-in tools', the loader's (`ToolFlags.loadsTools`, whose description then lists every
 * server tool in one line each) and those of the server tools the conversation has loaded: named
 * by a loader call, found by a finder call, or called at all. Past `maxCatalogueTools` server
 * tools the finder (`ToolFlags.findsTools`, a search over them) replaces the loader and its
 * catalogue, which would grow with every tool. That set is read from the transcript alone, so it survives a
 * restart and is the same on every replica; it only grows, so the tools (the start of the prompt,
 * which a provider caches) change only when a tool is loaded, and only at their end.
 */
export interface ToolOfferOptions {
  /** TOOL_SCHEMAS_MAX_TOKENS: the offered tools' schemas past which server tools are loaded. */
  maxSchemaTokens: number;
  /** TOOL_CATALOGUE_MAX_TOOLS: the server tools past which a request carries a search instead. */
  maxCatalogueTools: number;
}

/**
 * The filesystem server's 14 tools and the built-ins stay under it (2,369 as estimated here):
 * with one such server nothing changes. With the everything server's 14 beside them (3,719), the
 * server tools are loaded. A catalogue costs about 14 tokens a tool: with 60 a small-talk
 * request is still about 1.1× its size with 5 tools; past them, a search costs the same for any
 * number.
 */
export const DEFAULT_TOOL_OFFER: ToolOfferOptions = {
  maxSchemaTokens: 3_000,
  maxCatalogueTools: 60,
};

export function toolOfferSettings(r: SettingsReader): ToolOfferOptions {
  return {
    maxSchemaTokens: r.int('TOOL_SCHEMAS_MAX_TOKENS', DEFAULT_TOOL_OFFER.maxSchemaTokens, 0),
    maxCatalogueTools: r.int('TOOL_CATALOGUE_MAX_TOOLS', DEFAULT_TOOL_OFFER.maxCatalogueTools, 0),
  };
}

/** A catalogue line's description: its first sentence, cut to this many characters. */
const LINE_CHARS = 48;

/** The schemas as a request sends them, at 4 characters a token: the core has no tokenizer. */
export const schemaTokens = (tools: readonly ToolSpec[]): number =>
  Math.ceil(
    JSON.stringify(
      tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
    ).length / 4,
  );

const isLoader = (tool: ToolSpec) => tool.flags?.loadsTools === true;
const isFinder = (tool: ToolSpec) => tool.flags?.findsTools === true;
/** A tool that can wait to be loaded: a server's; a built-in one is always in the request. */
export const isLoadable = (tool: ToolSpec) =>
  tool.server !== undefined && !isLoader(tool) && !isFinder(tool);

/** The names a loader call's arguments give (`{"names": [...]}`); none when they are malformed. */
export function requestedNames(args: string | Record<string, unknown>): string[] {
  const parsed = typeof args === 'string' ? parseToolArguments(args) : { ok: true, args };
  if (!parsed.ok) return [];
  const { names } = parsed.args as { names?: unknown };
  const list = Array.isArray(names) ? names : typeof names === 'string' ? [names] : [];
  return list.filter((n): n is string => typeof n === 'string').map((n) => n.trim());
}

/** A finder's result: the first line says what it is, then one found tool's name a line. */
const FOUND =
  'Loaded, best first (call the one that fits; if none does, search again with other words):';
const NOTHING_FOUND = 'No tool matches these words: search again with other words.';

/** What a finder call returns for the tools it found, best first. */
export const foundToolsResult = (names: readonly string[]): string =>
  names.length ? [FOUND, ...names].join('\n') : NOTHING_FOUND;

/** The names a finder's result gives (`foundToolsResult`); none for any other text. */
export function foundNames(content: string): string[] {
  const [first, ...rest] = content.split('\n');
  return first === FOUND ? rest.map((n) => n.trim()).filter(Boolean) : [];
}

/**
 * Which of `names` are loadable tools, exactly or as the one tool of that name on some server
 * (`read_file` for `fs__read_file`), and which are not.
 */
export function resolveToolNames(
  names: readonly string[],
  tools: readonly ToolSpec[],
): { found: string[]; unknown: string[] } {
  const loadable = tools.filter(isLoadable);
  const found: string[] = [];
  const unknown: string[] = [];
  for (const name of names) {
    const exact = loadable.find((t) => t.name === name);
    const bySuffix = loadable.filter((t) => t.name.endsWith(`__${name}`));
    const match = exact ?? (bySuffix.length === 1 ? bySuffix[0] : undefined);
    if (!match) unknown.push(name);
    else if (!found.includes(match.name)) found.push(match.name);
  }
  return { found, unknown };
}

/**
 * The server tools the conversation has loaded, in the order it first did: those its loader calls
 * named, those its finder calls' results named, and those it called (a call of a tool not loaded
 * yet runs, and loads it).
 */
export function loadedToolNames(
  transcript: readonly Message[],
  tools: readonly ToolSpec[],
): string[] {
  const loader = tools.find(isLoader)?.name;
  const finder = tools.find(isFinder)?.name;
  const results = new Map(
    transcript.flatMap((m) => (m.role === 'tool' ? [[m.toolCallId, m.content] as const] : [])),
  );
  const named = (call: ToolCall): string[] =>
    call.name === loader
      ? requestedNames(call.arguments)
      : call.name === finder
        ? foundNames(results.get(call.id) ?? '')
        : [call.name];
  const loaded = new Set<string>();
  for (const message of transcript) {
    if (message.role !== 'assistant') continue;
    for (const call of message.toolCalls ?? []) {
      const names = named(call);
      for (const name of resolveToolNames(names, tools).found) loaded.add(name);
    }
  }
  return [...loaded];
}

/**
 * The first sentence of a description, on one line, cut to `LINE_CHARS` at a word's end where
 * one is in its second half.
 */
export function firstSentence(description: string): string {
  const text = description.replace(/\s+/g, ' ').trim();
  const end = text.search(/[.!?](\s|$)/);
  const sentence = end < 0 ? text : text.slice(0, end);
  if (sentence.length <= LINE_CHARS) return sentence;
  const cut = sentence.slice(0, LINE_CHARS - 1);
  const space = cut.lastIndexOf(' ');
  return `${space >= LINE_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}

/**
 * The start all of a server's tool names share (`fs__`), which its lines leave out; none when
 * they do not share one.
 */
function namePrefix(tools: readonly ToolSpec[]): string {
  const first = tools[0]?.name ?? '';
  const end = first.indexOf('__');
  const prefix = end < 0 ? '' : first.slice(0, end + 2);
  return tools.every((t) => t.name.startsWith(prefix) && t.name.length > prefix.length)
    ? prefix
    : '';
}

/**
 * One line per tool, `name: first sentence`, grouped by server under the prefix its tools' names
 * share (`[fs__]` then `read_file: …` for fs__read_file), else under `[server]` with whole names.
 */
export function toolCatalogue(tools: readonly ToolSpec[]): string {
  const servers = [...new Set(tools.map((t) => t.server ?? ''))];
  return servers
    .flatMap((server) => {
      const group = tools.filter((t) => (t.server ?? '') === server);
      const prefix = namePrefix(group);
      return [
        `[${prefix || server}]`,
        ...group.map((t) => `${t.name.slice(prefix.length)}: ${firstSentence(t.description)}`),
      ];
    })
    .join('\n');
}

/**
 * The tools a request carries (see `ToolOfferOptions`): `tools` as offered to the turn, the
 * loader among them, and the stored transcript, this turn's messages included.
 */
export function offeredTools(
  tools: readonly ToolSpec[],
  transcript: readonly Message[],
  options: ToolOfferOptions = DEFAULT_TOOL_OFFER,
): ToolSpec[] {
  const loader = tools.find(isLoader);
  const finder = tools.find(isFinder);
  const rest = tools.filter((t) => t !== loader && t !== finder);
  const loadable = rest.filter(isLoadable);
  const searched = finder !== undefined && loadable.length > options.maxCatalogueTools;
  if (
    !(searched || loader) ||
    loadable.length === 0 ||
    schemaTokens(rest) <= options.maxSchemaTokens
  )
    return rest;
  const byName = new Map(loadable.map((t) => [t.name, t]));
  return [
    ...rest.filter((t) => !isLoadable(t)),
    searched
      ? finder
      : { ...loader!, description: `${loader!.description}\n${toolCatalogue(loadable)}` },
    ...loadedToolNames(transcript, tools).map((name) => byName.get(name)!),
  ];
}

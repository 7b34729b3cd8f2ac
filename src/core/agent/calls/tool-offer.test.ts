import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TOOL_OFFER,
  firstSentence,
  foundNames,
  foundToolsResult,
  loadedToolNames,
  offeredTools,
  requestedNames,
  resolveToolNames,
  schemaTokens,
  toolCatalogue,
  toolOfferSettings,
} from './tool-offer.ts';
import { EnvReader } from '../../../config.ts';
import type { Message, ToolCall } from '../../ports/conversation.ts';
import type { ToolSpec } from '../../ports/tools.ts';

const builtin = (name: string): ToolSpec => ({
  name,
  description: `The built-in ${name}.`,
  parameters: { type: 'object', properties: {} },
});
const serverTool = (server: string, tool: string, description = `Does ${tool}. More.`) => ({
  name: `${server}__${tool}`,
  description,
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
  server,
});
const loader: ToolSpec = {
  name: 'load_tools',
  description: 'Load tools:',
  parameters: { type: 'object', properties: { names: { type: 'array' } } },
  flags: { loadsTools: true, freeIteration: true },
};
const search = builtin('search_history');
const fsRead = serverTool('fs', 'read_file');
const fsList = serverTool('fs', 'list_directory');
const ghIssue = serverTool('gh', 'create_issue');
const ghRead = serverTool('gh', 'read_file');
const tools: ToolSpec[] = [search, fsRead, fsList, loader, ghIssue, ghRead];
/** Every server tool is loaded only past this: the test tools' schemas are larger. */
const tight = { maxSchemaTokens: 10, maxCatalogueTools: 60 };
const loose = { maxSchemaTokens: 1_000_000, maxCatalogueTools: 60 };

let ids = 0;
const call = (name: string, args: unknown = {}): ToolCall => ({
  id: `call_${ids++}`,
  name,
  arguments: typeof args === 'string' ? args : JSON.stringify(args),
});
const calls = (turn: number, ...toolCalls: ToolCall[]): Message => ({
  role: 'assistant',
  content: '',
  toolCalls,
  turn,
});
const load = (turn: number, ...names: string[]) => calls(turn, call('load_tools', { names }));
const names = (specs: ToolSpec[]) => specs.map((t) => t.name);

describe('offeredTools', () => {
  it('offers every tool but the loader, as they come, while their schemas stay under the threshold', () => {
    const rest = tools.filter((t) => t !== loader);
    expect(offeredTools(tools, [], loose)).toEqual(rest);
    expect(offeredTools(tools, [load(1, 'fs__read_file')], loose)).toEqual(rest);
    // The threshold is inclusive: at it exactly, nothing changes; a token past it, the catalogue.
    const size = schemaTokens(rest);
    expect(offeredTools(tools, [], { ...loose, maxSchemaTokens: size })).toEqual(rest);
    expect(names(offeredTools(tools, [], { ...loose, maxSchemaTokens: size - 1 }))).toEqual([
      'search_history',
      'load_tools',
    ]);
  });

  it('offers everything when there is no loader, or nothing a loader could load', () => {
    const withoutLoader = tools.filter((t) => t !== loader);
    expect(offeredTools(withoutLoader, [], tight)).toEqual(withoutLoader);
    const builtins = [search, builtin('get_continuation'), loader];
    expect(offeredTools(builtins, [], tight)).toEqual(builtins.slice(0, 2));
  });

  it('past the threshold, offers the built-ins and the loader, whose description lists every server tool by server', () => {
    const offered = offeredTools(tools, [], tight);
    expect(names(offered)).toEqual(['search_history', 'load_tools']);
    expect(offered[0]).toBe(search);
    expect(offered[1]).toEqual({
      ...loader,
      description: [
        'Load tools:',
        '[fs__]',
        'read_file: Does read_file',
        'list_directory: Does list_directory',
        '[gh__]',
        'create_issue: Does create_issue',
        'read_file: Does read_file',
      ].join('\n'),
    });
  });

  it('adds the schemas of the tools loaded, after the loader, in the order they were first loaded', () => {
    const transcript: Message[] = [
      { role: 'user', content: 'hi', turn: 1 },
      load(1, 'gh__create_issue'),
      { role: 'tool', toolCallId: 'x', content: 'Loaded', turn: 1 },
      load(2, 'fs__list_directory', 'gh__create_issue'),
    ];
    const offered = offeredTools(tools, transcript, tight);
    expect(names(offered)).toEqual([
      'search_history',
      'load_tools',
      'gh__create_issue',
      'fs__list_directory',
    ]);
    expect(offered[2]).toBe(ghIssue);
    expect(offered[3]).toBe(fsList);
  });

  it('counts a tool called without being loaded as loaded (its call ran)', () => {
    const transcript = [calls(1, call('fs__read_file', { path: 'a' }), call('search_history'))];
    expect(names(offeredTools(tools, transcript, tight))).toEqual([
      'search_history',
      'load_tools',
      'fs__read_file',
    ]);
  });

  it('only grows as the transcript does, and keeps every earlier request as its start', () => {
    const steps = [
      load(1, 'fs__read_file'),
      calls(1, call('gh__read_file')),
      load(2, 'nonexistent', 'fs__read_file'),
      // Arguments repaired as the call's own run reads them.
      calls(3, call('load_tools', '{"names": ["gh__create_issue"'), call('shared_file')),
      load(4, 'list_directory'),
    ];
    const offers = steps.map((_, i) => offeredTools(tools, steps.slice(0, i + 1), tight));
    for (let i = 1; i < offers.length; i++)
      expect(offers[i]!.slice(0, offers[i - 1]!.length)).toEqual(offers[i - 1]);
    expect(names(offers.at(-1)!)).toEqual([
      'search_history',
      'load_tools',
      'fs__read_file',
      'gh__read_file',
      'gh__create_issue',
      'fs__list_directory',
    ]);
  });

  it('leaves out a loaded tool that is gone or that the turn does not offer', () => {
    const transcript = [load(1, 'fs__read_file', 'gh__create_issue')];
    const offered = tools.filter((t) => t !== fsRead);
    expect(names(offeredTools(offered, transcript, tight))).toEqual([
      'search_history',
      'load_tools',
      'gh__create_issue',
    ]);
  });

  it('uses the default threshold when given none', () => {
    expect(DEFAULT_TOOL_OFFER.maxSchemaTokens).toBe(3_000);
    expect(offeredTools(tools, [])).toEqual(tools.filter((t) => t !== loader));
    const many = Array.from({ length: 60 }, (_, i) =>
      serverTool('big', `tool_${i}`, 'x'.repeat(300)),
    );
    expect(names(offeredTools([search, loader, ...many], []))).toEqual([
      'search_history',
      'load_tools',
    ]);
  });
});

describe('loadedToolNames', () => {
  it('reads the loader calls and the calls of server tools, ignoring everything else', () => {
    const transcript: Message[] = [
      { role: 'user', content: 'load_tools fs__read_file', turn: 1 },
      calls(1, call('search_history', { query: 'x' })),
      calls(1, call('load_tools', 'not json')),
      calls(1, call('load_tools', { names: 'gh__read_file' })),
      calls(2, call('load_tools', { names: [1, 'fs__read_file', null] })),
      { role: 'assistant', content: 'done', turn: 2 },
    ];
    expect(loadedToolNames(transcript, tools)).toEqual(['gh__read_file', 'fs__read_file']);
  });

  it('loads nothing through a loader the tools do not include', () => {
    expect(loadedToolNames([load(1, 'fs__read_file')], [fsRead])).toEqual([]);
  });
});

describe('resolveToolNames', () => {
  it('takes exact names, and a bare name that one server alone has', () => {
    expect(
      resolveToolNames(
        ['gh__create_issue', 'create_issue', 'list_directory', 'read_file', 'search_history'],
        tools,
      ),
    ).toEqual({
      found: ['gh__create_issue', 'fs__list_directory'],
      // read_file is on two servers; a built-in is not loaded, it is always there.
      unknown: ['read_file', 'search_history'],
    });
  });

  it('never names the loader itself', () => {
    expect(resolveToolNames(['load_tools'], [{ ...loader, server: 'x' }])).toEqual({
      found: [],
      unknown: ['load_tools'],
    });
  });
});

describe('requestedNames', () => {
  it('reads names from JSON text or parsed arguments, a single name too, trimmed', () => {
    expect(requestedNames('{"names": [" a ", "b"]}')).toEqual(['a', 'b']);
    expect(requestedNames({ names: 'a' })).toEqual(['a']);
    expect(requestedNames({ names: ['a', 2] })).toEqual(['a']);
    expect(requestedNames({})).toEqual([]);
    expect(requestedNames('[1]')).toEqual([]);
    expect(requestedNames('{')).toEqual([]);
  });
});

describe('toolCatalogue', () => {
  it('groups by server in the order servers first appear, one line per tool, under the prefix their names share', () => {
    expect(toolCatalogue([ghIssue, fsRead, ghRead])).toBe(
      [
        '[gh__]',
        'create_issue: Does create_issue',
        'read_file: Does read_file',
        '[fs__]',
        'read_file: Does read_file',
      ].join('\n'),
    );
  });

  it('names the server and writes whole names when the names share no prefix', () => {
    const cut = { ...serverTool('gh', 'x'), name: 'gh_long_name_a1b2c3' };
    const bare = { ...serverTool('odd', 'x'), name: 'odd' };
    const justPrefix = { ...serverTool('p', 'x'), name: 'p__' };
    expect(toolCatalogue([ghIssue, cut, bare, justPrefix])).toBe(
      [
        '[gh]',
        'gh__create_issue: Does create_issue',
        'gh_long_name_a1b2c3: Does x',
        '[odd]',
        'odd: Does x',
        '[p]',
        'p__: Does x',
      ].join('\n'),
    );
  });
});

describe('firstSentence', () => {
  it('keeps the first sentence, on one line, cut to 48 characters at a word end', () => {
    expect(firstSentence('Reads a file. Then more.')).toBe('Reads a file');
    expect(firstSentence('Is it there? Yes!')).toBe('Is it there');
    expect(firstSentence('Reads\n  a file.\nThen')).toBe('Reads a file');
    expect(firstSentence('Reads v1.2 files')).toBe('Reads v1.2 files');
    expect(firstSentence('')).toBe('');
    expect(firstSentence('x'.repeat(48))).toBe('x'.repeat(48));
    // 'word word … word' cut before the 48th character, at the last word's end.
    expect(firstSentence('word '.repeat(30))).toBe(`${'word '.repeat(8)}word…`);
    // No word end in the second half: cut inside the word.
    expect(firstSentence(`ab ${'x'.repeat(60)}`)).toBe(`ab ${'x'.repeat(44)}…`);
    expect(firstSentence(`ab ${'x'.repeat(60)}`)).toHaveLength(48);
  });
});

describe('schemaTokens', () => {
  it('counts what a request sends of each schema, at four characters a token', () => {
    const json = JSON.stringify([
      { name: fsRead.name, description: fsRead.description, parameters: fsRead.parameters },
    ]);
    expect(schemaTokens([{ ...fsRead, flags: { bounded: true }, guidance: 'g'.repeat(400) }])).toBe(
      Math.ceil(json.length / 4),
    );
    expect(schemaTokens([])).toBe(1);
  });
});

describe('toolOfferSettings', () => {
  it('reads TOOL_SCHEMAS_MAX_TOKENS (3,000) and TOOL_CATALOGUE_MAX_TOOLS (60), and refuses a negative one', () => {
    expect(toolOfferSettings(new EnvReader({}))).toEqual({
      maxSchemaTokens: 3_000,
      maxCatalogueTools: 60,
    });
    expect(
      toolOfferSettings(
        new EnvReader({ TOOL_SCHEMAS_MAX_TOKENS: '0', TOOL_CATALOGUE_MAX_TOOLS: '0' }),
      ),
    ).toEqual({ maxSchemaTokens: 0, maxCatalogueTools: 0 });
    const reader = new EnvReader({ TOOL_SCHEMAS_MAX_TOKENS: '-1', TOOL_CATALOGUE_MAX_TOOLS: '-1' });
    toolOfferSettings(reader);
    expect(reader.problems).toEqual([
      expect.stringContaining('TOOL_SCHEMAS_MAX_TOKENS'),
      expect.stringContaining('TOOL_CATALOGUE_MAX_TOOLS'),
    ]);
  });
});

describe('offeredTools past TOOL_CATALOGUE_MAX_TOOLS', () => {
  const finder: ToolSpec = {
    name: 'find_tools',
    description: 'Find tools:',
    parameters: { type: 'object', properties: { query: { type: 'string' } } },
    flags: { findsTools: true, freeIteration: true },
  };
  const all = [search, loader, finder, fsRead, fsList, ghIssue, ghRead];
  const found = (turn: number, ...names: string[]): Message[] => {
    const c = call('find_tools', { query: 'files' });
    return [
      calls(turn, c),
      { role: 'tool', toolCallId: c.id, content: foundToolsResult(names), turn },
    ];
  };

  it('carries the finder, no catalogue, past that many server tools; the loader up to it', () => {
    expect(names(offeredTools(all, [], { ...tight, maxCatalogueTools: 3 }))).toEqual([
      'search_history',
      'find_tools',
    ]);
    expect(names(offeredTools(all, [], { ...tight, maxCatalogueTools: 4 }))).toEqual([
      'search_history',
      'load_tools',
    ]);
    expect(offeredTools(all, [], { ...loose, maxCatalogueTools: 0 })).toEqual([
      search,
      fsRead,
      fsList,
      ghIssue,
      ghRead,
    ]);
  });

  it('loads what its results named, after what was loaded before, and nothing a result did not name', () => {
    const transcript = [
      load(1, 'gh__create_issue'),
      ...found(2, 'fs__list_directory', 'fs__read_file', 'fs__nope'),
      calls(2, call('find_tools', { query: 'no result stored' })),
    ];
    expect(names(offeredTools(all, transcript, { ...tight, maxCatalogueTools: 0 }))).toEqual([
      'search_history',
      'find_tools',
      'gh__create_issue',
      'fs__list_directory',
      'fs__read_file',
    ]);
    const text = { role: 'tool', toolCallId: 'x', content: 'fs__read_file', turn: 1 } as const;
    expect(loadedToolNames([text], all)).toEqual([]);
    expect(foundNames('Loaded fs__read_file: call it now.')).toEqual([]);
  });
});

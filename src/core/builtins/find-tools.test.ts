import { describe, expect, it } from 'vitest';
import { findToolsTool } from './find-tools.ts';
import { foundNames, foundToolsResult } from '../agent/calls/tool-offer.ts';
import type { ToolContext, ToolSpec } from '../ports/tools.ts';

const spec = (name: string, description: string, server?: string): ToolSpec => ({
  name,
  description,
  parameters: { type: 'object' },
  ...(server ? { server } : {}),
});
const tools = [
  spec('search_history', 'Search the history of this channel for files.'),
  spec('fs__read_file', 'Read the complete contents of a file from the disk.', 'fs'),
  spec('fs__write_file', 'Create a new file or overwrite one with new contents.', 'fs'),
  spec('gh__create_issue', 'Open a new issue in a GitHub repository.', 'gh'),
];
const finder = findToolsTool(() => tools);
const run = (args: Record<string, unknown>, context = {} as ToolContext) =>
  finder.run(args, context);

describe('find_tools', () => {
  it('is flagged as the finder, and as no step of work', () => {
    expect(finder.spec.flags).toEqual({ findsTools: true, freeIteration: true });
    expect(finder.spec.server).toBeUndefined();
  });

  it('names the server tools that fit the words, best first, from the whole descriptions', async () => {
    const { content, isError } = await run({ query: 'what is in the file on disk?' });
    expect(isError).toBe(false);
    expect(foundNames(content)).toEqual(['fs__read_file', 'fs__write_file']);
    expect(foundNames((await run({ query: 'open an issue' })).content)).toEqual([
      'gh__create_issue',
    ]);
  });

  it('never names a tool the channel’s policy hides, nor a built-in one', async () => {
    const offers = (name: string) => name !== 'fs__read_file';
    const { content } = await run({ query: 'read files' }, { offers } as ToolContext);
    expect(foundNames(content)).toEqual(['fs__write_file']);
  });

  it('says when nothing matches, and asks for words when there are none', async () => {
    expect(await run({ query: 'xylophone' })).toEqual({
      content: foundToolsResult([]),
      isError: false,
    });
    expect(foundNames(foundToolsResult([]))).toEqual([]);
    expect((await run({ query: '  ' })).isError).toBe(true);
    expect((await run({})).isError).toBe(true);
  });
});

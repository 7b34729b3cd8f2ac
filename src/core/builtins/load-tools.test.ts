import { describe, expect, it } from 'vitest';
import { loadToolsTool } from './load-tools.ts';
import type { ToolContext, ToolSpec } from '../ports/tools.ts';

const spec = (name: string, server?: string): ToolSpec => ({
  name,
  description: name,
  parameters: { type: 'object' },
  ...(server ? { server } : {}),
});
const tools = [spec('search_history'), spec('fs__read_file', 'fs'), spec('fs__write_file', 'fs')];
const loader = loadToolsTool(() => tools);
const run = (args: Record<string, unknown>) => loader.run(args, {} as ToolContext);

describe('load_tools', () => {
  it('is flagged as the loader, and as no step of work', () => {
    expect(loader.spec.flags).toEqual({ loadsTools: true, freeIteration: true });
    expect(loader.spec.server).toBeUndefined();
  });

  it('says which names it loaded, and which are no tool', async () => {
    expect(await run({ names: ['fs__read_file'] })).toEqual({
      content: 'Loaded fs__read_file: call it now.',
      isError: false,
    });
    expect(await run({ names: ['write_file', 'fs__read_file', 'nope'] })).toEqual({
      content: 'Loaded fs__write_file, fs__read_file: call them now. Not in the list: nope.',
      isError: false,
    });
  });

  it('fails when it loads nothing: unknown names, a built-in, no names', async () => {
    expect(await run({ names: ['nope', 'search_history'] })).toEqual({
      content: JSON.stringify({ error: 'Nothing loaded. Not in the list: nope, search_history.' }),
      isError: true,
    });
    expect((await run({})).isError).toBe(true);
  });

  it("loads only what the channel's policy offers: a tool it hides is no tool here", async () => {
    const hidden = (name: string) => name !== 'fs__write_file';
    const inChannel = (args: Record<string, unknown>) =>
      loader.run(args, { offers: hidden } as unknown as ToolContext);
    expect(await inChannel({ names: ['fs__write_file'] })).toEqual({
      content: JSON.stringify({ error: 'Nothing loaded. Not in the list: fs__write_file.' }),
      isError: true,
    });
    expect(await inChannel({ names: ['write_file', 'read_file'] })).toEqual({
      content: 'Loaded fs__read_file: call it now. Not in the list: write_file.',
      isError: false,
    });
  });
});

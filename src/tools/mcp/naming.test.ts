import { describe, expect, it } from 'vitest';
import { exposedToolNames } from './naming.ts';

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;

describe('exposedToolNames', () => {
  it('joins server and tool with a double underscore', () => {
    expect(exposedToolNames([{ server: 'fs', tool: 'read_file' }])).toEqual(['fs__read_file']);
  });

  it('replaces characters the API rejects', () => {
    expect(exposedToolNames([{ server: 'my server', tool: 'get.thing/v2' }])).toEqual([
      'my_server__get_thing_v2',
    ]);
  });

  it('resolves collisions the same way whatever the input order', () => {
    const tools = [
      { server: 'a.b', tool: 'x' },
      { server: 'a_b', tool: 'x' },
      { server: 'a b', tool: 'x' },
    ];
    const names = exposedToolNames(tools);
    expect(new Set(names).size).toBe(3);
    const reversed = exposedToolNames([...tools].reverse());
    expect(reversed).toEqual([...names].reverse());
  });

  it('keeps long names within 64 characters and distinct', () => {
    const long = 'x'.repeat(80);
    const names = exposedToolNames([
      { server: 'srv', tool: `${long}a` },
      { server: 'srv', tool: `${long}b` },
    ]);
    for (const name of names) expect(name).toMatch(VALID);
    expect(names[0]).not.toBe(names[1]);
  });
});

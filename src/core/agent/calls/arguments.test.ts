import { describe, expect, it } from 'vitest';
import { isJsonObject, parseToolArguments } from './arguments.ts';

const errorOf = (raw: string) => {
  try {
    JSON.parse(raw);
    return '';
  } catch (e) {
    return (e as Error).message;
  }
};

describe('parseToolArguments', () => {
  it('parses valid JSON objects and treats empty arguments as {}', () => {
    expect(parseToolArguments('{"path": "/a"}')).toEqual({
      ok: true,
      args: { path: '/a' },
      repaired: false,
    });
    expect(parseToolArguments('')).toEqual({ ok: true, args: {}, repaired: false });
  });

  it.each([`{'path': '/a'}`, '{"path": "/a",}', '{"path": "/a"', '```json\n{"path": "/a"}\n```'])(
    'repairs %s',
    (raw) => {
      expect(parseToolArguments(raw)).toEqual({ ok: true, args: { path: '/a' }, repaired: true });
    },
  );

  it('names the problem when arguments cannot be repaired into an object', () => {
    const result = parseToolArguments('[1, 2]');
    expect(result).toEqual({ ok: false, error: 'arguments must be a JSON object' });
    expect(parseToolArguments('<path>/a</path>')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^arguments are not valid JSON \(.+\)$/),
    });
    // jsonrepair turns bare words into a JSON string, which is still not an object
    expect(parseToolArguments('read the file')).toEqual({
      ok: false,
      error: 'arguments are not valid JSON (' + errorOf('read the file') + ')',
    });
  });
});

describe('isJsonObject', () => {
  it('accepts only complete JSON objects', () => {
    expect(isJsonObject('{"a":1}')).toBe(true);
    expect(isJsonObject('{"a":')).toBe(false);
    expect(isJsonObject('"a"')).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { csvRows, pageOf, shapeOf } from './result-shape.ts';

describe('shapeOf', () => {
  it('reads one whole JSON object or array as JSON, pretty-printed', () => {
    const shape = shapeOf(' {"a":[1,{"b":null}]} ');
    expect(shape).toEqual({
      kind: 'json',
      value: { a: [1, { b: null }] },
      pretty: '{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ]\n}',
    });
    expect(shapeOf('{"a":1} trailing').kind).toBe('text');
    expect(shapeOf('"just a string"').kind).toBe('text');
  });

  it('reads CSV with quotes, doubled quotes and CRLF as a table of equal rows', () => {
    expect(csvRows('name,note\r\n"Doe, J.","said ""hi""\nthen left"\r\nx,y\n')).toEqual([
      ['name', 'note'],
      ['Doe, J.', 'said "hi"\nthen left'],
      ['x', 'y'],
    ]);
    expect(shapeOf('a,b\n1,2').kind).toBe('csv');
  });

  it('leaves text that is not a table as text', () => {
    expect(csvRows('a,b\n1,2,3')).toBeUndefined();
    expect(csvRows('one column\nonly')).toBeUndefined();
    expect(csvRows('a,b')).toBeUndefined();
    expect(csvRows('a,"b\n1,2')).toBeUndefined();
  });
});

describe('pageOf', () => {
  it('cuts pages on code point boundaries and clamps the index', () => {
    const text = `${'x'.repeat(9)}😀${'y'.repeat(9)}`;
    expect(pageOf(text, 0, 10)).toEqual({ index: 0, count: 2, start: 0, end: 9 });
    expect(pageOf(text, 1, 10)).toEqual({ index: 1, count: 2, start: 9, end: 20 });
    expect(pageOf(text, 99, 10)).toEqual({ index: 1, count: 2, start: 9, end: 20 });
    expect(pageOf('', 0, 10)).toEqual({ index: 0, count: 1, start: 0, end: 0 });
  });
});

import { describe, expect, it } from 'vitest';
import { toOutcome } from './result.ts';

describe('toOutcome', () => {
  it('joins text content', () => {
    expect(toOutcome({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).toEqual({ content: 'a\nb', isError: false });
  });

  it('gives structured content as JSON, once', () => {
    const structuredContent = { temperature: 21, sky: 'clear' };
    expect(toOutcome({ content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent })).toEqual({
      content: JSON.stringify(structuredContent, null, 2),
      isError: false,
    });
    expect(toOutcome({ content: [], structuredContent }).content).toBe(JSON.stringify(structuredContent, null, 2));
  });

  it('drops structured content that only wraps the text', () => {
    expect(toOutcome({ content: [{ type: 'text', text: 'line 1\nline 2' }], structuredContent: { content: 'line 1\nline 2' } }).content).toBe('line 1\nline 2');
  });

  it('summarises binary content by type and size', () => {
    const data = Buffer.alloc(3000).toString('base64');
    expect(toOutcome({ content: [{ type: 'image', data, mimeType: 'image/png' }] }).content).toBe('[image: image/png, 3000 bytes, not shown]');
    expect(toOutcome({ content: [{ type: 'resource', resource: { uri: 'file:///a.bin', blob: data, mimeType: 'application/zip' } }] }).content).toBe(
      '[resource file:///a.bin: application/zip, 3000 bytes, not shown]',
    );
  });

  it('passes isError results to the model as errors', () => {
    expect(toOutcome({ content: [{ type: 'text', text: 'no such file' }], isError: true })).toEqual({ content: '{"error":"no such file"}', isError: true });
  });

  it('writes deep structured content as compact JSON, without recursion, and loses none of it', () => {
    const nest = (depth: number) => {
      const root: Record<string, unknown> = {};
      let at = root;
      for (let i = 0; i < depth; i++) at = (at.next = { i, tag: 'x' }) as Record<string, unknown>;
      return root;
    };
    const deep = nest(3_000);
    const { content, isError } = toOutcome({ content: [], structuredContent: deep });
    expect(isError).toBe(false);
    // Exactly the compact JSON (which holds every value), not megabytes of indent. (A deep
    // toEqual would itself overflow the stack now and then, so the texts are compared.)
    expect(content).toBe(JSON.stringify(deep));
    // Deeper than JSON.stringify itself can go (it throws "Maximum call stack size exceeded").
    const deeper = nest(200_000);
    expect(() => JSON.stringify(deeper)).toThrow(RangeError);
    const huge = toOutcome({ content: [{ type: 'text', text: 'summary' }], structuredContent: deeper }).content;
    expect(huge.startsWith('summary\n{"next":{"i":0,"tag":"x","next":{"i":1')).toBe(true);
    expect(huge.endsWith('}'.repeat(200_001))).toBe(true);
  });

  it('keeps shallow structured content pretty', () => {
    expect(toOutcome({ content: [], structuredContent: { a: { b: [1, 2] } } }).content).toBe(JSON.stringify({ a: { b: [1, 2] } }, null, 2));
  });
});

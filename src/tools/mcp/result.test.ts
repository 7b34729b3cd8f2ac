import { describe, expect, it } from 'vitest';
import { toOutcome } from './result.ts';

const MAX = 10_000;

describe('toOutcome', () => {
  it('joins text content', () => {
    expect(
      toOutcome(
        {
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        MAX,
      ),
    ).toEqual({ content: 'a\nb', isError: false });
  });

  it('gives structured content as JSON, once', () => {
    const structuredContent = { temperature: 21, sky: 'clear' };
    expect(
      toOutcome(
        { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent },
        MAX,
      ),
    ).toEqual({
      content: JSON.stringify(structuredContent, null, 2),
      isError: false,
    });
    expect(toOutcome({ content: [], structuredContent }, MAX).content).toBe(
      JSON.stringify(structuredContent, null, 2),
    );
  });

  it('drops structured content that only wraps the text', () => {
    expect(
      toOutcome(
        {
          content: [{ type: 'text', text: 'line 1\nline 2' }],
          structuredContent: { content: 'line 1\nline 2' },
        },
        MAX,
      ).content,
    ).toBe('line 1\nline 2');
  });

  it('summarises binary content by type and size, and hands on the bytes when under the cap', () => {
    const data = Buffer.alloc(3000, 7).toString('base64');
    const image = toOutcome({ content: [{ type: 'image', data, mimeType: 'image/png' }] }, MAX);
    expect(image.content).toBe('[image: image/png, 3000 bytes, stored, not shown]');
    expect(image.binaries).toEqual([
      { kind: 'image', mimeType: 'image/png', sizeBytes: 3000, base64: data },
    ]);
    const blob = toOutcome(
      {
        content: [
          {
            type: 'resource',
            resource: { uri: 'file:///a.bin', blob: data, mimeType: 'application/zip' },
          },
        ],
      },
      2_999,
    );
    expect(blob.content).toBe(
      '[resource file:///a.bin: application/zip, 3000 bytes, not stored (over TOOL_RESULT_BINARY_MAX_BYTES), not shown]',
    );
    expect(blob.binaries).toEqual([
      { kind: 'resource', mimeType: 'application/zip', sizeBytes: 3000 },
    ]);
  });

  it('passes isError results to the model as errors', () => {
    expect(
      toOutcome({ content: [{ type: 'text', text: 'no such file' }], isError: true }, MAX),
    ).toEqual({ content: '{"error":"no such file"}', isError: true });
  });

  it('writes deep structured content as compact JSON, without recursion, and loses none of it', () => {
    const nest = (depth: number) => {
      const root: Record<string, unknown> = {};
      let at = root;
      for (let i = 0; i < depth; i++) at = (at.next = { i, tag: 'x' }) as Record<string, unknown>;
      return root;
    };
    const deep = nest(3_000);
    const { content, isError } = toOutcome({ content: [], structuredContent: deep }, MAX);
    expect(isError).toBe(false);
    // Exactly the compact JSON (which holds every value), not megabytes of indent. (A deep
    // toEqual would itself overflow the stack now and then, so the texts are compared.)
    expect(content).toBe(JSON.stringify(deep));
    // Deeper than a recursive JSON.stringify can go: Node 22's and 24's throw "Maximum call stack
    // size exceeded"; Node 26's does not recurse, and then both texts must be the same.
    const deeper = nest(20_000);
    let native: string | undefined;
    try {
      native = JSON.stringify(deeper);
    } catch (error) {
      expect(error).toBeInstanceOf(RangeError);
    }
    const huge = toOutcome(
      { content: [{ type: 'text', text: 'summary' }], structuredContent: deeper },
      MAX,
    ).content;
    expect(huge.startsWith('summary\n{"next":{"i":0,"tag":"x","next":{"i":1')).toBe(true);
    expect(huge.endsWith('}'.repeat(20_001))).toBe(true);
    if (native !== undefined) expect(huge).toBe(`summary\n${native}`);
  });

  it('keeps shallow structured content pretty', () => {
    expect(toOutcome({ content: [], structuredContent: { a: { b: [1, 2] } } }, MAX).content).toBe(
      JSON.stringify({ a: { b: [1, 2] } }, null, 2),
    );
  });
});

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
});

import { describe, expect, it } from 'vitest';
import { fileReader, kindOf } from './file-reader.ts';
import { minimalPdf } from '../../test/support/pdf.ts';

const file = (name: string, mimeType?: string) => ({
  name,
  mimeType,
  sizeBytes: 0,
  url: 'https://files.slack.com/x',
});
const bytes = (text: string) => new TextEncoder().encode(text);

describe('kindOf', () => {
  it('goes by the declared type, then the name, then the bytes', () => {
    expect(kindOf(file('a.bin', 'application/pdf'), bytes(''))).toBe('pdf');
    expect(kindOf(file('a.png', 'image/png'), bytes(''))).toBe('image');
    expect(kindOf(file('export', 'application/json'), bytes('{}'))).toBe('text');
    expect(kindOf(file('server.log', 'application/octet-stream'), bytes('x'))).toBe('text');
    expect(kindOf(file('notes'), bytes('plain words, café'))).toBe('text');
    expect(kindOf(file('blob'), new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x00, 0x01]))).toBe(
      'other',
    );
    expect(kindOf(file('latin1'), new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6f, 0x6b]))).toBe(
      'other',
    );
  });
});

describe('fileReader', () => {
  const reader = fileReader({ binaryMaxBytes: 10 });

  it('reads text as UTF-8, and a PDF by its text layer, page by page', async () => {
    expect(await reader.read(file('a.txt', 'text/plain'), bytes('\uFEFFhello ☃'))).toEqual({
      content: 'hello ☃',
      isError: false,
    });
    const pdf = await reader.read(
      file('r.pdf', 'application/pdf'),
      minimalPdf(['Revenue rose 12% (to 4.2M)', 'Churn: 3.1%']),
    );
    expect(pdf).toEqual({
      content: '[page 1]\nRevenue rose 12% (to 4.2M)\nChurn: 3.1%',
      isError: false,
    });
  });

  it('describes what is not text, keeping its bytes within the cap and saying when it could not', async () => {
    const small = await reader.read(file('a.png', 'image/png'), new Uint8Array([1, 2, 3]));
    expect(small).toEqual({
      content: '[image "a.png", image/png, 3 bytes: its bytes are stored.]',
      isError: false,
      binaries: [{ kind: 'image', mimeType: 'image/png', sizeBytes: 3, base64: 'AQID' }],
    });
    const large = await reader.read(file('a.zip', 'application/zip'), new Uint8Array(11));
    expect(large.content).toBe(
      '[file that is not text "a.zip", application/zip, 11 bytes: its bytes are over the 10-byte limit, so only this description is stored.]',
    );
    expect(large.binaries).toEqual([{ kind: 'blob', mimeType: 'application/zip', sizeBytes: 11 }]);
    const broken = await reader.read(
      file('b.pdf', 'application/pdf'),
      bytes('%PDF-1.4 not really'),
    );
    expect(broken.isError).toBe(true);
    expect(broken.content).toMatch(/^\[PDF that could not be read \(.+\) "b\.pdf"/);
    // pdf.js works in a worker of its own, given a time limit: a PDF that stalls it is let go.
    const stalled = await fileReader({ binaryMaxBytes: 10, pdfTimeoutMs: 1 }).read(
      file('r.pdf', 'application/pdf'),
      minimalPdf(['slow']),
    );
    expect(stalled.content).toMatch(
      /^\[PDF that could not be read \(it took over 0\.001 s\) "r\.pdf"/,
    );
  });
});

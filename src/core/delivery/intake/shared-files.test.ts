import { describe, expect, it } from 'vitest';
import { readSharedFiles } from './shared-files.ts';
import {
  FileTooLargeError,
  type InboundFile,
  type InboundMessage,
} from '../../ports/platform/delivery.ts';

const listed = (name: string, sizeBytes = 10): InboundFile => ({
  name,
  mimeType: 'text/plain',
  sizeBytes,
  url: `https://files.example/${name}`,
});
const message = (files: InboundFile[]): InboundMessage => ({
  lane: { platform: 't', workspace: 'w', channel: 'c', thread: 't' },
  messageKey: 'k',
  kind: 'message',
  user: 'u',
  text: 'see these',
  delivery: {},
  files,
});
const reader = {
  read: async (file: InboundFile, bytes: Uint8Array) => ({
    content: `${file.name}: ${new TextDecoder().decode(bytes)}`,
    isError: false,
  }),
};
const limits = { maxBytes: 100, maxPerMessage: 2 };
const signal = new AbortController().signal;

describe('readSharedFiles', () => {
  it('reads up to the count cap and says how many were left out', async () => {
    const fetched: string[] = [];
    const fetchFile = async (_m: InboundMessage, file: InboundFile) => (
      fetched.push(file.name),
      new TextEncoder().encode('body')
    );
    const { files, notes } = await readSharedFiles(
      message([listed('a'), listed('b'), listed('c')]),
      { fetchFile },
      reader,
      limits,
      signal,
    );
    expect(files.map((f) => f.outcome.content)).toEqual(['a: body', 'b: body']);
    expect(fetched).toEqual(['a', 'b']);
    expect(notes).toEqual(['Only the first 2 files of a message are read; 1 more were left out.']);
  });

  it('turns every file it cannot read into an error result the model reads, and a note the user reads', async () => {
    const fetchFile = async (_m: InboundMessage, file: InboundFile): Promise<Uint8Array> => {
      if (file.name === 'liar') throw new FileTooLargeError('over');
      throw new Error('HTTP 404');
    };
    const { files, notes } = await readSharedFiles(
      message([listed('huge', 101), listed('liar')]),
      { fetchFile },
      reader,
      limits,
      signal,
    );
    expect(files.map((f) => [f.outcome.isError, JSON.parse(f.outcome.content).error])).toEqual([
      [true, 'The shared file "huge" was not read: it is over the 100-byte limit for files.'],
      [true, 'The shared file "liar" was not read: it is over the 100-byte limit for files.'],
    ]);
    expect(notes).toHaveLength(2);
    const gone = await readSharedFiles(
      message([listed('gone')]),
      { fetchFile },
      reader,
      limits,
      signal,
    );
    expect(gone.notes).toEqual(['gone was not read: it could not be fetched (HTTP 404).']);
    const nowhere = await readSharedFiles(message([listed('x')]), {}, reader, limits, signal);
    expect(nowhere.notes).toEqual(['x was not read: files cannot be fetched from this platform.']);
  });
});

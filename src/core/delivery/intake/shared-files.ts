import { errorResult } from '../../ports/tools.ts';
import type { FileReader, SharedFile } from '../../ports/files.ts';
import {
  FileTooLargeError,
  type InboundFile,
  type InboundMessage,
} from '../../ports/platform/delivery.ts';
import type { Outbound } from '../../ports/platform/platform.ts';
import { errorMessage } from '../../errors.ts';

export interface FileLimits {
  /** A file's size, declared or streamed, past which it is not read. */
  maxBytes: number;
  /** Files of one message that are read; the rest are left out. */
  maxPerMessage: number;
}

const size = (bytes: number) =>
  bytes >= 1_000_000 ? `${(bytes / 1_000_000).toFixed(1)} MB` : `${bytes}-byte`;

/**
 * The files of a message, fetched and read within the limits. A file that is not read still
 * becomes a result, saying why, so the model can tell the user; `notes` says it to the user
 * directly, below the reply.
 */
export async function readSharedFiles(
  message: InboundMessage,
  outbound: Pick<Outbound, 'fetchFile'>,
  reader: FileReader,
  limits: FileLimits,
  signal: AbortSignal,
): Promise<{ files: SharedFile[]; notes: string[] }> {
  const listed = message.files ?? [];
  const notes: string[] = [];
  if (listed.length > limits.maxPerMessage)
    notes.push(
      `Only the first ${limits.maxPerMessage} files of a message are read; ${listed.length - limits.maxPerMessage} more were left out.`,
    );
  const read = async (file: InboundFile) => {
    const notRead = (why: string) => {
      notes.push(`${file.name} was not read: ${why}.`);
      return errorResult(`The shared file "${file.name}" was not read: ${why}.`);
    };
    const overLimit = () => notRead(`it is over the ${size(limits.maxBytes)} limit for files`);
    if (file.sizeBytes > limits.maxBytes) return overLimit();
    if (!outbound.fetchFile) return notRead('files cannot be fetched from this platform');
    let bytes: Uint8Array;
    try {
      bytes = await outbound.fetchFile(message, file, limits.maxBytes, signal);
    } catch (error) {
      signal.throwIfAborted();
      return error instanceof FileTooLargeError
        ? overLimit()
        : notRead(`it could not be fetched (${errorMessage(error)})`);
    }
    return reader.read(file, bytes);
  };
  const files = await Promise.all(
    listed.slice(0, limits.maxPerMessage).map(async (file) => ({
      name: file.name,
      mimeType: file.mimeType,
      sizeBytes: file.sizeBytes,
      outcome: await read(file),
    })),
  );
  return { files, notes };
}

import type { InboundFile } from './platform/delivery.ts';
import type { ToolOutcome } from './tools.ts';

/**
 * Turns a file's bytes into what the model reads: its text, or a description with the bytes kept.
 */
export interface FileReader {
  read(file: InboundFile, bytes: Uint8Array): Promise<ToolOutcome>;
}

/** A file shared with a user message, ready to store as a result of the turn it came with. */
export interface SharedFile {
  name: string;
  mimeType?: string;
  sizeBytes: number;
  /** Its text, a description, or why it could not be read. */
  outcome: ToolOutcome;
}

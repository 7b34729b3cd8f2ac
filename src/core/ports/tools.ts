import type { Conversation } from './conversation.ts';

/** The tool port: the registry (MCP servers and built-ins) implements it. */

/** How the turn loop treats a tool's calls and output: the loop reads these, never tool names. */
export interface ToolFlags {
  /**
   * Its output is a view of results already stored (a page, matching lines, search hits): it is
   * left out of later steps' requests once the model has moved past it, since asking again is
   * cheap, and search does not look into it.
   */
  derived?: boolean;
  /** Its output is bounded already: it counts toward the turn's result budget but is never previewed. */
  bounded?: boolean;
  /** Calling it is not a step of work: it does not count toward MAX_TOOL_ITERATIONS. */
  freeIteration?: boolean;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  flags?: ToolFlags;
}

/** Bytes a tool returned (an image, audio, a blob): only described to the model; kept when under the store's cap. */
export interface BinaryPart {
  kind: string;
  mimeType?: string;
  sizeBytes: number;
  /** The bytes, base64; absent when over the cap. */
  base64?: string;
}

export interface ToolOutcome {
  content: string;
  isError: boolean;
  binaries?: BinaryPart[];
}

export interface ToolContext {
  conversation: Conversation;
  turn: number;
  signal: AbortSignal;
}

export interface ToolPort {
  list(): ToolSpec[];
  /** Must not throw: failures come back as `{ isError: true }` outcomes. */
  call(name: string, args: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome>;
}


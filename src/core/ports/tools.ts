import type { Conversation, ConversationKey, Message } from './conversation.ts';
import type { FormAnswer, FormRequest } from './parked/forms.ts';

/** The tool port: the registry (MCP servers and built-ins) implements it. */

/** How the turn loop treats a tool's calls and output: the loop reads these, never tool names. */
export interface ToolFlags {
  /**
   * Its output is a view of results already stored (a page, matching lines, search hits): it is
   * left out of later steps' requests once the model has moved past it, since asking again is
   * cheap, and search does not look into it.
   */
  derived?: boolean;
  /**
   * Its output is bounded already: it counts toward the turn's result budget but is never
   * previewed.
   */
  bounded?: boolean;
  /** Calling it is not a step of work: it does not count toward MAX_TOOL_ITERATIONS. */
  freeIteration?: boolean;
  /**
   * Calls one turn may make to it; past that a call is refused and the model is asked to answer.
   */
  maxCallsPerTurn?: number;
  /**
   * Calling it changes nothing (MCP `readOnlyHint`): a call whose outcome is unknown (a crash cut
   * it short) is sent again when the turn resumes.
   */
  readOnly?: boolean;
  /**
   * Calling it again with the same arguments has no further effect (MCP `idempotentHint`, or the
   * operator's `idempotentTools`): sent again like a read-only call. A call of any other tool whose
   * outcome is unknown is never sent again by Spool; the model is told it may have happened.
   */
  idempotent?: boolean;
  /**
   * It loads other tools: past TOOL_SCHEMAS_MAX_TOKENS, a request carries it, with a line for
   * each server tool in its description, in place of the server tools' schemas; its calls'
   * `names` are the tools whose schemas the conversation's later requests carry
   * (`offeredTools`).
   */
  loadsTools?: boolean;
  /**
   * It finds other tools: past TOOL_CATALOGUE_MAX_TOOLS server tools, a request carries it in
   * place of the loader and its catalogue; the tools its results name are loaded as the loader's
   * are (`offeredTools`).
   */
  findsTools?: boolean;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  flags?: ToolFlags;
  /**
   * The MCP server it comes from; none for a built-in tool, which every request carries whole.
   */
  server?: string;
  /** A paragraph for the system prompt, sent while the tool is offered: how and when to use it. */
  guidance?: string;
}

/**
 * Bytes a tool returned (an image, audio, a blob): only described to the model; kept when under the
 * store's cap.
 */
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
  /**
   * The turn's signal stopped the call before its answer came (a person's Stop, shutdown, a lost
   * lease): it was sent, so whether it took effect is unknown.
   */
  cutShort?: boolean;
}

/**
 * A result the model reads as a failure it can act on: `{"error": …}`, with any details beside it.
 */
export const errorResult = (
  message: string,
  details: Record<string, unknown> = {},
): ToolOutcome => ({
  content: JSON.stringify({ error: message, ...details }),
  isError: true,
});

/** What the turn has read so far, for a tool that reads stored results (get_continuation). */
export interface ReadingContext {
  /** The turn's transcript: a long user message is read from it, not from the stored results. */
  transcript: readonly Message[];
  /** What the request keeps in view of this turn's reading: a page is never larger. */
  viewChars: number;
  /**
   * Tokens the model's window can still take beside the request that made the call and its reply
   * budget; undefined when the window is not known.
   */
  roomTokens?: number;
}

/** Where a long call has got to, as its server says (MCP progress notifications). */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * What a tool that reads stored results is reading: characters `from` to `to` of a result `of`
 * characters, or, with a pattern, the lines that match it from `from` on.
 */
export interface StoredRead {
  from: number;
  to: number;
  of: number;
  pattern?: string;
}

export interface ToolContext {
  conversation: Conversation;
  turn: number;
  /** The id of the call being run: Spool's own (`call_` and 32 hex digits), as stored. */
  callId?: string;
  /**
   * The person whose message the turn answers (their platform user id; the conversation says
   * which platform and workspace): a server used with each person's own sign-in acts as them.
   */
  user?: string;
  signal: AbortSignal;
  reading: ReadingContext;
  /** Told each time the running call reports progress. */
  onProgress?(progress: ToolProgress): void;
  /** Told what a call that reads stored results reads, once it knows. */
  onReading?(read: StoredRead): void;
  /**
   * Whether the turn's channel offers a tool (its policy); absent, every tool is offered. A tool
   * that names others (load_tools) names only these.
   */
  offers?(name: string): boolean;
  /** Puts the running call's question to the person who started the turn; absent, declined. */
  askForm?(request: FormRequest): Promise<FormAnswer>;
  /**
   * Asks the turn's model on the running call's behalf (MCP sampling): under the turn's person,
   * model and caps, its usage counted as theirs. Absent, declined.
   */
  askModel?(request: SamplingRequest): Promise<SamplingAnswer>;
}

/** A message of a sampling conversation: text, the model's calls, or their results. */
export type SamplingMessage =
  | { role: 'user'; text: string }
  | {
      role: 'assistant';
      text: string;
      toolCalls?: Array<{ id: string; name: string; arguments: string }>;
    }
  | { role: 'tool'; toolCallId: string; text: string };

/** What a tool's server asks the model: its own conversation, tools and budget, never the turn's. */
export interface SamplingRequest {
  system?: string;
  messages: SamplingMessage[];
  maxTokens: number;
  /** Tools the server offers the model for this request; the server runs them, not Spool. */
  tools?: ToolSpec[];
  toolChoice?: 'auto' | 'none';
}

/** The model's answer, or why it was not asked (a cap reached). */
export type SamplingAnswer =
  | {
      text: string;
      toolCalls: Array<{ id: string; name: string; arguments: string }>;
      model: string;
      stopReason: 'endTurn' | 'maxTokens' | 'toolUse';
    }
  | { refusal: string };

/**
 * A call that cannot end now and is taken up again later: the person who asked must sign in to its
 * server first, or its server runs it as a task. The turn parks on it as on a call awaiting
 * approval (no lease held, nothing polling) and runs it again when woken or at `until`.
 */
export interface ParkedCall {
  parked: 'sign_in' | 'task';
  /** When the call is taken up again if nothing wakes it first. */
  until: Date;
  /** What the people in the thread read meanwhile (a task's progress). */
  status?: string;
  /** A sign-in: the page the person who asked must open, shown to them alone, and why. */
  signIn?: { server: string; url: string; reason: string };
}

/**
 * One tool: its spec, with the flags the loop reads, and how to run it. A tool that never parks
 * says so in its type (`Tool<ToolOutcome>`).
 */
export interface Tool<Outcome extends ToolOutcome | ParkedCall = ToolOutcome | ParkedCall> {
  spec: ToolSpec;
  run(args: Record<string, unknown>, context: ToolContext): Promise<Outcome>;
}

/** Whether a call parked instead of ending. */
export const isParked = (outcome: ToolOutcome | ParkedCall): outcome is ParkedCall =>
  'parked' in outcome;

export interface ToolPort {
  list(): ToolSpec[];
  /**
   * Throws when the tool cannot be run (it is gone, or failed): the loop turns that into an error
   * result.
   */
  call(
    name: string,
    args: Record<string, unknown>,
    context: ToolContext,
  ): Promise<ToolOutcome | ParkedCall>;
  /**
   * The calls among these that this port can take up again without running them twice (a task a
   * server runs, followed by its id): a resumed turn runs them again instead of answering them as
   * interrupted.
   */
  resumable?(toolCallIds: string[]): Promise<Set<string>>;
  /** Cancels what calls made in this conversation still run as tasks (a person's Stop). */
  cancelTasks?(conversation: ConversationKey): Promise<void>;
}

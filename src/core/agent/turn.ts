import type { ApprovalGate, TurnOptions, TurnSpend } from '../ports/turns.ts';
import type { Conversation, Message } from '../ports/conversation.ts';
import type { ImagePart } from '../ports/llm.ts';
import type { ToolContext, ToolOutcome, ToolSpec } from '../ports/tools.ts';

/** What stays fixed through a turn. */
export interface Turn {
  conversation: Conversation;
  number: number;
  /** The stored transcript, appended to as the turn goes. */
  transcript: Message[];
  /**
   * The tools offered, as the channel's policy allows: listed again before each request, so that
   * a tool a server adds mid-turn is there for the next one.
   */
  tools: ToolSpec[];
  offers(name: string): boolean;
  /** The system prompt and model of this turn's requests. */
  system: string;
  model?: string;
  signal: AbortSignal;
  /** Results ready before their calls are made: the shared files, by call id. */
  ready: Map<string, ToolOutcome>;
  /**
   * The images of files shared and of tool results, for a model that takes image input; only the
   * turn they came with sees them.
   */
  images: Map<string, ImagePart[]>;
  /** Which calls wait for a person's decision, and the wait. */
  approval?: ApprovalGate;
  askForm?: ToolContext['askForm'];
  user?: string;
  signIn?: TurnOptions['signIn'];
  /**
   * Unanswered calls the tools can take up again without running them twice (a task followed by
   * its id): a resumed turn runs them again.
   */
  resumable: Set<string>;
  /** Those of them that waited for their person's sign-in: each is started once. */
  signInWaits: Set<string>;
  onActivity?: TurnOptions['onActivity'];
  /**
   * What the window can still take beside the newest request sent (see `LlmPort.room`), counted
   * when first asked for: a step that makes no calls never counts it.
   */
  room?: () => Promise<number | undefined>;
  spend?: TurnSpend;
  /** The lease each step's write carries (see `TurnOptions.fence`). */
  fence?: TurnOptions['fence'];
  /**
   * The person's message, in `transcript` and in the requests but not stored yet: it is stored
   * with the turn's first step, or with its end (see `Agent.run`).
   */
  unwritten?: Message;
}

/**
 * The platform port: what a platform adapter does for the delivery engine (`Outbound`), what the
 * engine offers an adapter (`Delivery`: the few calls adapters make), and what the process needs
 * of an adapter to run it (`PlatformAdapter`).
 */
import type { RequestListener } from 'node:http';
import type { ClickOutcome } from '../parked/approvals.ts';
import type { ChannelAccess } from './channel-access.ts';
import type { Rating } from '../feedback.ts';
import type { FormAnswer, FormRequest, QuestionState, RawForm } from '../parked/forms.ts';
import type { HistoryHit, StoredResult } from '../history.ts';
import type { Naming, UsageReport } from '../spend.ts';
import type { InboundEdit, InboundFile, InboundMessage, ReplyLink, ReplyPart } from './delivery.ts';

/**
 * One message to post: chunk `seq` of the reply to inbox row `inboxId` (none for a failure notice).
 */
export interface OutgoingChunk extends ReplyPart {
  inboxId?: string;
  seq: number;
  /** The last message of an answer: it carries 👍 and 👎 for the answer (to inbox row `inboxId`). */
  feedback?: boolean;
}

/** What a platform does for the delivery engine. */
export interface Outbound {
  /** The reply as the platform's messages, each within its size limit. */
  render(reply: string): string[];
  /** It posts a file with a message: a reply longer than a few messages goes as one file. */
  postsFiles?: boolean;
  /** Posts one chunk; returns the platform's id for it. */
  post(message: InboundMessage, chunk: OutgoingChunk): Promise<string>;
  /**
   * The platform id of a chunk that a crashed process may have posted without recording it, where
   * the platform can tell. A chunk it cannot find is posted.
   */
  findPosted?(
    message: InboundMessage,
    chunk: OutgoingChunk & { inboxId: string },
  ): Promise<string | undefined>;
  /**
   * Rewrites a posted message, without its buttons: a prompt once decided, an answer an edited
   * question's new answer replaces.
   */
  edit?(message: InboundMessage, platformMessageId: string, chunk: OutgoingChunk): Promise<void>;
  /**
   * Takes back a posted file, which a new answer replaced (a file cannot be edited in place). One
   * already gone is no error.
   */
  removeFile?(message: InboundMessage, platformMessageId: string): Promise<void>;
  /**
   * Asks the person at hand to approve a call, in place of a prompt with buttons (the console):
   * resolves with their answer, or a refusal saying why they cannot be asked.
   */
  askApproval?(
    message: InboundMessage,
    prompt: string,
  ): Promise<{ approved: boolean; note?: string }>;
  /**
   * Asks the person at hand to fill in a tool's form, in place of a prompt (the console); declines
   * where nobody can be asked.
   */
  askForm?(message: InboundMessage, request: FormRequest): Promise<FormAnswer>;
  /**
   * Posts `text` in the message's channel as the start of a new thread (a scheduled run's header);
   * returns the thread's key, the lane its turn runs in. ChannelGoneError when Spool can no longer
   * post there.
   */
  startThread?(message: InboundMessage, text: string): Promise<string>;
  /** Tells a person `text` privately (a direct message), outside any thread. */
  tell?(place: { workspace: string; user: string }, text: string): Promise<void>;
  /** Tells the sender, privately, that Spool is not enabled for them here. */
  refuse(message: InboundMessage): Promise<void>;
  /**
   * Shows the sender alone a text and a link to open (a sign-in to a tool server, bound to them):
   * never posted in the thread, where others would see it.
   */
  showPrivately?(message: InboundMessage, text: string, link: ReplyLink): Promise<void>;
  /**
   * Shows that Spool is working; resolves to the function that ends it, told whether a reply is
   * about to be posted (on some platforms a reply ends it by itself). Never throws.
   */
  showWorking(message: InboundMessage): Promise<(replyFollows: boolean) => Promise<void>>;
  /**
   * Says what Spool is doing, in place of the working indicator's words ("running ops__deploy"):
   * at most about once a second, never after the turn ended, but once for a turn parked for
   * approval ("waiting for approval of ops__deploy from …", after its prompts), which stands until
   * the turn is taken up again (`showWorking`).
   */
  showStatus?(message: InboundMessage, status: string): Promise<void>;
  /**
   * The platform drops a status shown this long ago by itself (Slack: after two minutes): the
   * engine shows it again before then, a parked turn's too, while it waits.
   */
  statusLapses?: boolean;
  /**
   * Names the lane's thread after its first question, where the platform titles threads (Slack's
   * agent view). Never throws.
   */
  titleThread?(message: InboundMessage): Promise<void>;
  /** What was said in the lane before Spool joined it, for a fresh conversation. */
  threadContext?(message: InboundMessage): Promise<string | undefined>;
  /**
   * The bytes of a file listed with `message`, at most `maxBytes` of them (FileTooLargeError past
   * that). Throws when the file cannot be fetched, or may not be with the platform's credentials.
   */
  fetchFile?(
    message: InboundMessage,
    file: InboundFile,
    maxBytes: number,
    signal: AbortSignal,
  ): Promise<Uint8Array>;
}

export interface HandleOptions {
  /** Tells the platform the message arrived (Discord's deferral); called once it is stored. */
  acknowledge?: () => Promise<void>;
  /** Resolve `answered` when this process has delivered the reply (the console waits for it). */
  waitForReply?: boolean;
}

/** A workspace of a platform, as an install or an uninstall names it. */
export interface WorkspacePlace {
  platform: string;
  workspace: string;
}

/** How a delivered reply came about: `failed` when it tells the user the turn failed. */
export type Answered = 'ok' | 'failed';

/**
 * `malformed`: the message can never be stored (see `problemsOf`); it was dropped, and `problems`
 * name why. `ignored`: an app's message where the channel's policy answers people only.
 */
export type Handled =
  | { status: 'accepted'; answered?: Promise<Answered> }
  | { status: 'duplicate' | 'refused' | 'ignored' }
  | { status: 'malformed'; problems: string[] };

/** Who asks, for what the allow-lists decide. */
export type Asker = Pick<InboundMessage, 'lane' | 'user' | 'roles'>;

/** A click on an approval prompt's button. */
export interface ApprovalClick extends Asker {
  toolCallId: string;
  approve: boolean;
}

/** A click on 👍 or 👎 under an answer (the reply to inbox row `inboxId`), or the reason after 👎. */
export interface FeedbackClick extends Asker {
  inboxId: string;
  rating: Rating;
  reason?: string;
}

/** `unknown`: no answer to that message here (pruned, or not Spool's); `refused`: not allowed. */
export type FeedbackOutcome = 'recorded' | 'unknown' | 'refused';

/** A click on a question's Submit, Decline or Cancel, with what was typed for Submit. */
export interface FormClick extends Asker {
  questionId: string;
  action: FormAnswer['action'];
  values?: RawForm;
}

/**
 * What the click came to. `invalid`: nothing was recorded; the person can correct the form and
 * submit again.
 */
export type FormClickOutcome =
  | { status: 'answered' | 'not_allowed' | 'unknown' }
  | { status: 'invalid'; problems: string[] }
  | { status: 'already'; state: QuestionState };

/** `nothing`: no turn in the lane is running or waiting (it has been answered). */
export type StopOutcome = 'stopping' | 'nothing' | 'refused';

/** Who may use Spool on a platform; an absent list allows everyone. */
export interface Access {
  workspaces?: string[];
  channels?: string[];
  users?: string[];
  /** Any one of these roles suffices. */
  roles?: string[];
  /**
   * The workspace direct messages are recorded under where they are in none of the platform's
   * workspaces (Discord's). It is no one's to administer: each person's things there are theirs
   * alone, and an admin is anyone there.
   */
  directMessages?: string;
}

/** The delivery engine as platform adapters use it. */
export interface Delivery {
  /** The platform's outbound side, and who may talk to Spool there by default. */
  register(platform: string, outbound: Outbound, access?: Access): void;
  /**
   * Records the message, then answers it in its lane's turn. Throws NotRecordedError when it
   * cannot be stored now (the platform must not be told it arrived).
   */
  handleIncoming(message: InboundMessage, options?: HandleOptions): Promise<Handled>;
  /** search_history for a person, behind the allow-lists; undefined when refused. */
  recall(who: Asker, query: string): Promise<HistoryHit[] | undefined>;
  /**
   * A stored result in full for a person, behind the allow-lists, with a link to its page where
   * the web pages have an address; 'refused' when they may not.
   */
  result(
    who: Asker,
    toolCallId: string,
  ): Promise<(StoredResult & { link?: ReplyLink }) | 'refused' | undefined>;
  /**
   * A person's edit (or deletion) of a message Spool recorded: the turn runs again with the new
   * words and its answer replaces the old one (with a note when later answers may be stale; see
   * edits.ts); `ignored` for anyone else's edit, an unknown message, or an edit already followed.
   */
  editIncoming(edit: InboundEdit): Promise<'edited' | 'deleted' | 'ignored'>;
  /** Only an approver's click counts, and only the first decision. */
  decideApproval(click: ApprovalClick): Promise<ClickOutcome>;
  /**
   * Stops a turn in `who`'s lane: the message with `messageKey` (a button on it), else the lane's
   * oldest unanswered one. Its reply becomes a short note; what the turn stored stays.
   */
  stopTurn(who: Asker, messageKey?: string): Promise<StopOutcome>;
  /**
   * The app was uninstalled from a workspace: every open turn there ends with nothing posted (here
   * at once, on other replicas within half a second), its schedules pause. Nothing of another
   * workspace stops.
   */
  workspaceGone(place: WorkspacePlace): Promise<{ ended: number; paused: number }>;
  /** Installed again: the schedules its uninstall paused run again. */
  workspaceBack(place: WorkspacePlace): Promise<{ resumed: number }>;
  /** Only the person asked may answer a question, and only the first answer counts. */
  answerForm(click: FormClick): Promise<FormClickOutcome>;
  /**
   * A prompt a tool server offers (`<server> <prompt> name=value…`), as the text of a message
   * from `who`; or, for a person, what is wrong with the command (or the prompts on offer).
   */
  promptText(who: Asker, command: string): Promise<{ text: string } | { problem: string }>;
  /**
   * `who`'s usage in the workspace (everyone's, for an admin), with channels and people named as
   * the platform shows them; 'refused' where they may not talk to Spool.
   */
  usage(who: Asker, names: Naming): Promise<UsageReport | 'refused'>;
  /**
   * `who`'s sign-ins to tool servers used with each person's own account (everyone's, for an
   * admin), as text; 'refused' where they may not talk to Spool.
   */
  logins(who: Asker, names: Naming): Promise<string | 'refused'>;
  /**
   * A link for `who` to sign in to `server` as themselves, to be shown to them alone; or what to
   * tell them instead; 'refused' where they may not talk to Spool.
   */
  login(who: Asker, server: string): Promise<string | 'refused'>;
  /**
   * `<server> [person]`: ends `who`'s own sign-in to the server, or (an admin) the person's; what to
   * tell them, or 'refused'.
   */
  logout(who: Asker, command: string, names: Naming): Promise<string | 'refused'>;
  /**
   * The agent view's prompts for `who`, looking at `contextChannel` (see greeting.ts); 'refused'
   * where they may not talk to Spool. Its greeting is a message of kind `greeting`.
   */
  suggestedPrompts(
    who: Asker,
    contextChannel?: string,
  ): Array<{ title: string; message: string }> | undefined | 'refused';
  /** A 👍 or 👎 on an answer, or the reason for a 👎 (see feedback.ts). */
  rateAnswer(click: FeedbackClick): Promise<FeedbackOutcome>;
  /**
   * `schedule …` (a new schedule, `list`, `cancel <id>`) for `who` in their channel, the rule read
   * in `timeZone` where the platform says it: the answer's text, or undefined where they may not
   * talk to Spool.
   */
  schedule(who: Asker, words: string, timeZone?: string): Promise<string | undefined>;
  /** The open question's form, for `who` to fill in (a platform that shows it on a click). */
  form(who: Asker, questionId: string): Promise<FormRequest | FormClickOutcome>;
}

/** A platform as the process runs it. */
export interface PlatformAdapter {
  /** As people read it (`Slack`); lower-cased, its readiness check's name. */
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Whether its events reach Spool now (for /readyz). */
  ready(): boolean;
  /**
   * Where the platform calls Spool over HTTP (Slack's Events API, Discord's interactions), the
   * handler of those requests.
   */
  httpHandler?(): RequestListener | undefined;
  /** Who may read a channel, as the platform says: the web pages show records by it. */
  channelAccess?(): ChannelAccess;
  /** The one path its handler serves; without it, every path no other platform's handler serves. */
  readonly httpPath?: string;
}

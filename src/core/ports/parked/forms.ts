/**
 * The forms port: a question a tool asks mid-call (MCP elicitation: a form, or a page to open), put
 * to the person who started the turn, and their answer, kept on a row so that whichever replica takes the click
 * records it once.
 */

export type FormValue = string | number | boolean | string[];

/** One field, as every platform can show it. */
export interface FormField {
  /** The key of the answer's content. */
  name: string;
  /** What people read: the schema's title, else the name. */
  label: string;
  description?: string;
  /** `choice`: one of `options`; `choices`: any of them. */
  kind: 'text' | 'number' | 'integer' | 'boolean' | 'choice' | 'choices';
  required: boolean;
  options?: { value: string; label: string }[];
  default?: FormValue;
  /** A number's range, a text's length, how many choices. */
  min?: number;
  max?: number;
  format?: 'email' | 'uri' | 'date' | 'date-time';
}

export interface FormRequest {
  /** Who asks: the MCP server's name. */
  from: string;
  message: string;
  fields: FormField[];
  /**
   * A page the person is asked to open (URL elicitation), http or https; such a question has no
   * fields, and accepting it is their consent. Shown only to people, never to the model.
   */
  url?: string;
}

/** Accept, decline and cancel, as MCP's elicitation defines them. */
export type FormAnswer =
  { action: 'accept'; content: Record<string, FormValue> } | { action: 'decline' | 'cancel' };

/** What a platform hands back: per field, what was typed or picked; absent, left empty. */
export type RawForm = Record<string, string | string[] | undefined>;

export type QuestionStatus = 'open' | FormAnswer['action'] | 'expired';

export interface QuestionState {
  id: string;
  inboxId: string;
  platform: string;
  /** Only they may answer: the person whose message started the turn. */
  askedOf: string;
  request: FormRequest;
  status: QuestionStatus;
  content?: Record<string, FormValue>;
  by?: string;
  expiresAt: Date;
}

export interface QuestionPort {
  open(question: Omit<QuestionState, 'status' | 'expiresAt'>, timeoutMs: number): Promise<Date>;
  state(id: string): Promise<QuestionState | undefined>;
  /**
   * Records the answer if the question is still open (an expiry, only once it is due): the first
   * one wins. Undefined when no such question was asked.
   */
  answer(
    id: string,
    answer: FormAnswer | { action: 'expired' },
    by?: string,
  ): Promise<{ won: boolean; state: QuestionState } | undefined>;
}

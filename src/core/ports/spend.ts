/** The spend port: usage as the store keeps it, and the caps on it, held across replicas. */

/** Whose message a model request answers, and where. */
export interface Spender {
  platform: string;
  workspace: string;
  channel: string;
  user: string;
}

/**
 * Where a policy rule or a spend cap applies: unset parts match anything, and a rule that names
 * more is more specific. Here, beside the spender it is matched against, so that the policy and
 * the spend caps (which the policy carries) both read it without importing each other.
 */
export interface PolicyMatch {
  platform?: string;
  workspace?: string;
  channel?: string;
}

/** What a cap counts: tokens, or money in the price table's currency. */
export type SpendUnit = 'tokens' | 'cost';

/**
 * The usage one cap counts: its place (platform and workspace always; a channel and a person where
 * the cap is theirs) over its period.
 */
export interface CapScope {
  platform: string;
  workspace: string;
  channel?: string;
  user?: string;
  unit: SpendUnit;
  /** The period's start. */
  since: Date;
  limit: number;
}

/** What a model request may cost at most, held against the caps while it runs. */
export interface Hold {
  tokens: number;
  /** Unknown when the model's price is. */
  cost?: number;
}

/**
 * What a turn keeps back for itself besides each request's hold: at its first request, what to
 * reserve for the rest of the turn; at each later one, the reserve it holds (which that request's
 * hold is drawn from, and which its own requests do not count against it).
 */
export type TurnReserve = { reserve: Hold } | { reserveId: string };

/**
 * A request may go (its hold stored, and at a turn's first request the turn's reserve), or one
 * scope's limit is reached: by what it has spent (stored usage) and what requests and turns in
 * flight hold against it.
 */
export type Admission =
  | { admitted: true; holdId: string; reserveId?: string }
  | { admitted: false; at: number; spent: number; held?: number };

/** A day's usage of one person in one channel, of one model. */
export interface UsageRow {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  channel: string;
  model: string;
  /** Unknown for usage stored before people were kept. */
  user?: string;
  tokens: number;
  /** At known prices. */
  cost: number;
  /** Requests of models with no price. */
  unpriced: number;
}

/** Whose usage: all of a workspace, or one person's in it. */
export interface UsageQuery {
  platform: string;
  workspace: string;
  user?: string;
  since: Date;
}

export interface SpendLedger {
  /**
   * Holds what a request may cost unless one of the scopes has reached its limit (counting its
   * stored usage and the holds of requests and turns in flight), atomically across replicas. A
   * hold is released by the write that stores the request's usage, or by `release`, or when it
   * expires.
   *
   * With `turn`, the request is one of a turn's. Its first also reserves the rest of the turn, and
   * is refused, while anything else is in flight, unless the whole turn (hold and reserve) fits
   * under each limit; each later one is not counted against its own turn's reserve, and draws its
   * hold from it (the reserve renewed to `expiresAt`).
   */
  admit(
    spender: Spender,
    scopes: CapScope[],
    hold: Hold,
    expiresAt: Date,
    turn?: TurnReserve,
  ): Promise<Admission>;
  /** Releases holds and reserves, by id (gone already is no matter). */
  release(...holdIds: string[]): Promise<void>;
  /** Usage since the query's start, by day, channel, person and model. */
  usage(query: UsageQuery): Promise<UsageRow[]>;
}

/** What `/usage` shows: the text, and each of the last 30 days' totals for a chart. */
export interface UsageReport {
  text: string;
  days: Array<{ day: string; tokens: number; cost: number }>;
  /** The price table's, when prices are set. */
  currency?: string;
}

/** How channels and people are named where a report is shown (a mention, a name). */
export interface Naming {
  channel(id: string): string;
  person(id: string): string;
}

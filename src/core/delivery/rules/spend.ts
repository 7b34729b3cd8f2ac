import { errorMessage } from '../../errors.ts';
import type { LlmUsage } from '../../ports/llm.ts';
import { StoreError } from '../../ports/store.ts';
import type { CapScope, Hold, PolicyMatch, Spender, SpendLedger } from '../../ports/spend.ts';
import type { TurnSpend } from '../../ports/turns.ts';

/** A model's price per million tokens, in the price table's currency. */
export interface ModelPrice {
  input: number;
  /** Prompt tokens read from the server's cache; the input price when not given. */
  cachedInput?: number;
  output: number;
}

/** The policy file's price table and spend caps. */
export interface SpendPolicy {
  /** By model name, as the server reports it (or as OPENAI_MODEL names it). */
  prices?: Record<string, ModelPrice>;
  /** What the prices are in, as people read it (`USD`). */
  currency?: string;
  /** Who sees everyone's usage in `/usage`; everyone else sees their own. */
  admins?: string[];
  caps?: SpendCap[];
}

/**
 * A limit on usage over a day or a calendar month (UTC): of each channel, each person or each
 * workspace, where `match` says it applies (everywhere without it). A person's cap counts their use
 * in the places `match` names.
 */
export interface SpendCap {
  per: 'channel' | 'user' | 'workspace';
  period: 'day' | 'month';
  /** One of the two: tokens, or money in the price table's currency. */
  tokens?: number;
  spend?: number;
  match?: PolicyMatch;
}

const MILLION = 1_000_000;

/** What a request's usage cost at the table's prices; undefined for a model without a price. */
export function priceOf(
  usage: Pick<LlmUsage, 'model' | 'promptTokens' | 'cachedPromptTokens' | 'completionTokens'>,
  prices: SpendPolicy['prices'],
): number | undefined {
  const price = priceFor(usage.model, prices);
  if (!price) return undefined;
  const cached = Math.min(usage.cachedPromptTokens ?? 0, usage.promptTokens);
  return (
    ((usage.promptTokens - cached) * price.input +
      cached * (price.cachedInput ?? price.input) +
      usage.completionTokens * price.output) /
    MILLION
  );
}

/** A dated snapshot's suffix: `-2024-08-06`, `-0613`. */
const SNAPSHOT = /-(\d{4}-\d{2}-\d{2}|\d{4})$/;

/**
 * A model's price: by its name, else by its name without a snapshot's date (servers report
 * `gpt-4o-2024-08-06` for `gpt-4o`; `gpt-4o-mini` is another model, never priced as `gpt-4o`).
 */
export function priceFor(model: string, prices: SpendPolicy['prices']): ModelPrice | undefined {
  return prices?.[model] ?? prices?.[model.replace(SNAPSHOT, '')];
}

/**
 * The most `tokens` could cost: every one at the model's dearest rate (of any model in the table,
 * for a request of the default model).
 */
function mostCost(tokens: number, model: string | undefined, prices: SpendPolicy['prices']) {
  const rates = model === undefined ? Object.values(prices ?? {}) : [priceFor(model, prices)];
  const dearest = Math.max(0, ...rates.flatMap((p) => (p ? [p.input, p.output] : [])));
  return dearest > 0 ? (tokens * dearest) / MILLION : undefined;
}

const applies = ({ match }: SpendCap, s: Spender) =>
  (!match?.platform || match.platform === s.platform) &&
  (!match?.workspace || match.workspace === s.workspace) &&
  (!match?.channel || match.channel === s.channel);

/** Where a period that holds `now` starts, and where the next starts (UTC). */
export function periodOf(period: SpendCap['period'], now: Date): { since: Date; resets: Date } {
  const [y, m, d] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  return period === 'day'
    ? { since: new Date(Date.UTC(y, m, d)), resets: new Date(Date.UTC(y, m, d + 1)) }
    : { since: new Date(Date.UTC(y, m, 1)), resets: new Date(Date.UTC(y, m + 1, 1)) };
}

/** The usage each cap that applies to `spender` counts, now. */
export function capScopes(caps: SpendCap[], spender: Spender, now: Date): CapScope[] {
  return caps
    .filter((cap) => applies(cap, spender))
    .map((cap) => ({
      platform: spender.platform,
      workspace: spender.workspace,
      ...(cap.per === 'channel' || cap.match?.channel ? { channel: spender.channel } : {}),
      ...(cap.per === 'user' ? { user: spender.user } : {}),
      unit: cap.spend === undefined ? 'tokens' : 'cost',
      since: periodOf(cap.period, now).since,
      limit: cap.spend ?? cap.tokens!,
    }));
}

const WHOSE = { channel: 'This channel has', user: 'You have', workspace: 'This workspace has' };

/** An amount as people read it: tokens, or money in the table's currency. */
export function amount(value: number, unit: 'tokens' | 'cost', currency = 'USD'): string {
  return unit === 'tokens'
    ? `${Math.round(value).toLocaleString('en-US')} tokens`
    : `${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${currency}`;
}

/** How long until a reset, as people say it: minutes, hours and minutes, or days. */
const howLong = (ms: number) => {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  if (minutes < 60) return `${minutes} min`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return `${Math.floor(minutes / (24 * 60))} days`;
};

/**
 * Names the cap reached, what was spent (stored usage, never what requests in flight hold), and
 * when it resets. A cap refused for what turns under way hold (`held`), before it is spent, says
 * so: they may leave room once they finish.
 */
export function capReached(
  cap: SpendCap,
  spent: number,
  now: Date,
  currency?: string,
  held = 0,
): string {
  const unit = cap.spend === undefined ? 'tokens' : 'cost';
  const limit = cap.spend ?? cap.tokens!;
  const { resets } = periodOf(cap.period, now);
  const when =
    (cap.period === 'day'
      ? 'at 00:00 UTC'
      : `on ${resets.toISOString().slice(0, 10)} at 00:00 UTC`) +
    `, in ${howLong(resets.getTime() - now.getTime())}`;
  const whose = cap.per === 'user' ? 'your' : 'its';
  const capOf = `cap of ${amount(limit, unit, currency)} a ${cap.period}`;
  if (spent >= limit || held <= 0)
    return `${WHOSE[cap.per]} reached ${whose} ${capOf} (${amount(spent, unit, currency)} used). It resets ${when}.`;
  return (
    `${WHOSE[cap.per]} too little left of ${whose} ${capOf} for another answer now ` +
    `(${amount(spent, unit, currency)} used; answers under way hold ${amount(held, unit, currency)} more). ` +
    `Try again once they finish, or after it resets ${when}.`
  );
}

/** How long a hold outlives its request, should the process that made it die. */
const HOLD_MS = 10 * 60_000;

/**
 * How many requests at their most a turn keeps back for itself when it starts under a cap: its
 * first request's hold, and twice that again as its reserve.
 */
export const TURN_REQUESTS = 3;

const times = (hold: Hold, n: number): Hold => ({
  tokens: hold.tokens * n,
  ...(hold.cost === undefined ? {} : { cost: hold.cost * n }),
});

/**
 * What a turn needs to count its usage: who asked, the prices, and (where a cap applies) the gate
 * each request passes.
 *
 * Under a cap a turn is admitted whole or not at all, where the estimate allows: its first request
 * reserves, beside its own hold, what TURN_REQUESTS − 1 more requests like it may cost, and while
 * other requests or turns are in flight it starts only if that whole estimate fits what the cap
 * has left. Its later requests draw their holds from that reserve, and count everyone's holds but
 * their own turn's reserve; a turn that outgrows its estimate is stopped before a request the cap
 * has no room for, as the last guard. When the turn ends, its reserve and any hold a request left
 * (a response that carried no usage, a write that failed) go with it.
 */
export function turnSpend(
  spender: Spender,
  policy: SpendPolicy,
  ledger: SpendLedger | undefined,
  now: () => Date = () => new Date(),
): TurnSpend {
  const price = (usage: LlmUsage) => priceOf(usage, policy.prices);
  const caps = (policy.caps ?? []).filter((cap) => applies(cap, spender));
  if (!ledger || caps.length === 0) return { user: spender.user, price };
  let reserveId: string | undefined;
  let holds: string[] = [];
  return {
    user: spender.user,
    price,
    async admit(model, mostTokens) {
      const at = now();
      const hold = { tokens: mostTokens, cost: mostCost(mostTokens, model, policy.prices) };
      // The database away: the turn is tried again once it answers, as for any write it makes.
      const admission = await ledger
        .admit(
          spender,
          capScopes(caps, spender, at),
          hold,
          new Date(at.getTime() + HOLD_MS),
          reserveId ? { reserveId } : { reserve: times(hold, TURN_REQUESTS - 1) },
        )
        .catch((error: unknown) => {
          throw new StoreError(`the spend caps could not be read: ${errorMessage(error)}`, {
            cause: error,
          });
        });
      if (!admission.admitted)
        return {
          refusal: capReached(
            caps[admission.at]!,
            admission.spent,
            at,
            policy.currency,
            admission.held,
          ),
        };
      reserveId ??= admission.reserveId;
      holds.push(admission.holdId);
      return { holdId: admission.holdId };
    },
    release: (holdId) => ledger.release(holdId),
    async end() {
      const ids = [...(reserveId ? [reserveId] : []), ...holds];
      [reserveId, holds] = [undefined, []];
      // Left to expire when the database is away: a hold outlives its turn by ten minutes at most.
      await ledger.release(...ids).catch(() => {});
    },
  };
}

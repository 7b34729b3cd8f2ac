import { describe, expect, it } from 'vitest';
import type { CapScope, Hold, Spender, SpendLedger, TurnReserve } from '../../ports/spend.ts';
import { StoreError } from '../../ports/store.ts';
import {
  capReached,
  capScopes,
  periodOf,
  priceFor,
  priceOf,
  turnSpend,
  TURN_REQUESTS,
} from './spend.ts';

const PRICES = {
  'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
  cheap: { input: 1, output: 2 },
};
const spender: Spender = { platform: 'slack', workspace: 'T1', channel: 'C1', user: 'U1' };
const at = (iso: string) => new Date(iso);

describe('priceOf', () => {
  it('prices cached prompt tokens at the cached rate, the rest of the prompt and the completion at theirs', () => {
    const usage = {
      model: 'gpt-4o',
      promptTokens: 1_000,
      cachedPromptTokens: 400,
      completionTokens: 100,
    };
    expect(priceOf(usage, PRICES)).toBeCloseTo((600 * 2.5 + 400 * 1.25 + 100 * 10) / 1e6, 12);
    // Without a cached rate, cached tokens cost the input rate.
    expect(priceOf({ ...usage, model: 'cheap' }, PRICES)).toBeCloseTo(
      (1_000 * 1 + 100 * 2) / 1e6,
      12,
    );
  });

  it("finds a snapshot's price by its model, never another model's, and none for an unknown one", () => {
    expect(priceFor('gpt-4o-2024-08-06', PRICES)).toBe(PRICES['gpt-4o']);
    expect(priceFor('gpt-4o-0613', PRICES)).toBe(PRICES['gpt-4o']);
    expect(priceFor('gpt-4o-mini', PRICES)).toBeUndefined();
    expect(
      priceOf({ model: 'llama', promptTokens: 1, completionTokens: 1 }, PRICES),
    ).toBeUndefined();
    expect(
      priceOf({ model: 'gpt-4o', promptTokens: 1, completionTokens: 1 }, undefined),
    ).toBeUndefined();
  });
});

describe('periodOf', () => {
  it('starts a day at midnight UTC and a month on its first, rolling over the year', () => {
    expect(periodOf('day', at('2026-12-31T23:59:59Z'))).toEqual({
      since: at('2026-12-31T00:00:00Z'),
      resets: at('2027-01-01T00:00:00Z'),
    });
    expect(periodOf('month', at('2026-12-15T10:00:00Z'))).toEqual({
      since: at('2026-12-01T00:00:00Z'),
      resets: at('2027-01-01T00:00:00Z'),
    });
  });
});

describe('capScopes', () => {
  const now = at('2026-11-24T10:00:00Z');
  it('counts a channel cap in the channel, a person cap by the person (in the channel its match names), a workspace cap in the workspace; a cap elsewhere not at all', () => {
    const scopes = capScopes(
      [
        { per: 'channel', period: 'day', tokens: 100 },
        { per: 'user', period: 'month', spend: 5 },
        { per: 'user', period: 'day', tokens: 10, match: { channel: 'C1' } },
        { per: 'workspace', period: 'month', tokens: 1_000, match: { platform: 'slack' } },
        { per: 'workspace', period: 'day', tokens: 1, match: { workspace: 'T2' } },
      ],
      spender,
      now,
    );
    const where = { platform: 'slack', workspace: 'T1' };
    const day = at('2026-11-24T00:00:00Z');
    const month = at('2026-11-01T00:00:00Z');
    expect(scopes).toEqual<CapScope[]>([
      { ...where, channel: 'C1', unit: 'tokens', since: day, limit: 100 },
      { ...where, user: 'U1', unit: 'cost', since: month, limit: 5 },
      { ...where, channel: 'C1', user: 'U1', unit: 'tokens', since: day, limit: 10 },
      { ...where, unit: 'tokens', since: month, limit: 1_000 },
    ]);
  });
});

describe('capReached', () => {
  const now = at('2026-11-24T21:30:00Z');
  it('names whose cap it is, its amount and period, what was used, and when it resets', () => {
    expect(capReached({ per: 'channel', period: 'day', tokens: 200_000 }, 201_337, now)).toBe(
      'This channel has reached its cap of 200,000 tokens a day (201,337 tokens used). It resets at 00:00 UTC, in 2 h 30 min.',
    );
    expect(capReached({ per: 'user', period: 'month', spend: 5 }, 5.004, now, 'EUR')).toBe(
      'You have reached your cap of 5.00 EUR a month (5.00 EUR used). It resets on 2026-12-01 at 00:00 UTC, in 6 days.',
    );
    expect(
      capReached({ per: 'workspace', period: 'day', tokens: 10 }, 12, at('2026-11-24T23:59:30Z')),
    ).toBe(
      'This workspace has reached its cap of 10 tokens a day (12 tokens used). It resets at 00:00 UTC, in 1 min.',
    );
  });

  it('counts what was spent, never what requests under way hold, and says when they hold the rest', () => {
    expect(
      capReached({ per: 'channel', period: 'day', tokens: 3_000 }, 2_700, now, 'USD', 900),
    ).toBe(
      'This channel has too little left of its cap of 3,000 tokens a day for another answer now (2,700 tokens used; answers under way hold 900 tokens more). Try again once they finish, or after it resets at 00:00 UTC, in 2 h 30 min.',
    );
    expect(capReached({ per: 'user', period: 'month', spend: 5 }, 1.5, now, 'EUR', 4)).toBe(
      'You have too little left of your cap of 5.00 EUR a month for another answer now (1.50 EUR used; answers under way hold 4.00 EUR more). Try again once they finish, or after it resets on 2026-12-01 at 00:00 UTC, in 6 days.',
    );
    // Spent past the cap: holds do not matter, and are not named.
    expect(
      capReached({ per: 'channel', period: 'day', tokens: 3_000 }, 3_100, now, 'USD', 900),
    ).toBe(
      'This channel has reached its cap of 3,000 tokens a day (3,100 tokens used). It resets at 00:00 UTC, in 2 h 30 min.',
    );
  });
});

describe('turnSpend', () => {
  const now = () => at('2026-11-24T10:00:00Z');
  /** A ledger that admits while what it was asked to hold stays under 1,000 tokens. */
  function ledger(): SpendLedger & { holds: Hold[]; expiries: Date[] } {
    const holds: Hold[] = [];
    const expiries: Date[] = [];
    return {
      holds,
      expiries,
      admit: async (_, scopes, hold, expiresAt) => {
        const spent = holds.reduce((n, h) => n + h.tokens, 0);
        if (spent >= scopes[0]!.limit) return { admitted: false, at: 0, spent };
        holds.push(hold);
        expiries.push(expiresAt);
        return { admitted: true, holdId: String(holds.length) };
      },
      release: async () => {},
      usage: async () => [],
    };
  }

  it('without a cap that applies, counts and prices usage but asks no gate', () => {
    const spend = turnSpend(
      spender,
      {
        prices: PRICES,
        caps: [{ per: 'channel', period: 'day', tokens: 1, match: { channel: 'C9' } }],
      },
      ledger(),
      now,
    );
    expect(spend.user).toBe('U1');
    expect(spend.admit).toBeUndefined();
    expect(
      spend.price({ model: 'cheap', promptTokens: 1e6, completionTokens: 0, totalTokens: 1e6 }),
    ).toBe(1);
  });

  it("holds a request's most tokens at the dearest rate, for ten minutes, and refuses past the cap with its note", async () => {
    const held = ledger();
    const spend = turnSpend(
      spender,
      { prices: PRICES, caps: [{ per: 'channel', period: 'day', tokens: 1_000 }] },
      held,
      now,
    );
    expect(await spend.admit!('gpt-4o', 600)).toEqual({ holdId: '1' });
    expect(await spend.admit!(undefined, 600)).toEqual({ holdId: '2' });
    expect(held.holds).toEqual([
      { tokens: 600, cost: (600 * 10) / 1e6 },
      { tokens: 600, cost: (600 * 10) / 1e6 },
    ]);
    expect(held.expiries[0]).toEqual(at('2026-11-24T10:10:00Z'));
    expect(await spend.admit!('gpt-4o', 600)).toEqual({
      refusal:
        'This channel has reached its cap of 1,000 tokens a day (1,200 tokens used). It resets at 00:00 UTC, in 14 h 0 min.',
    });
  });

  it('fails as the store fails when the database is away, so the turn is tried again', async () => {
    const away: SpendLedger = {
      ...ledger(),
      admit: async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      },
    };
    const spend = turnSpend(
      spender,
      { caps: [{ per: 'channel', period: 'day', tokens: 1 }] },
      away,
      now,
    );
    await expect(spend.admit!(undefined, 10)).rejects.toBeInstanceOf(StoreError);
  });
});

describe('turnSpend under a cap, a turn at a time', () => {
  const now = () => at('2026-11-24T10:00:00Z');
  /** A ledger that records what each request asked for, and what was released. */
  function recording(refuse?: { spent: number; held?: number }) {
    const asked: Array<{ hold: Hold; turn?: TurnReserve }> = [];
    const released: string[][] = [];
    let ids = 0;
    const ledger: SpendLedger = {
      admit: async (_, __, hold, ___, turn) => {
        asked.push({ hold, turn });
        if (refuse) return { admitted: false, at: 0, ...refuse };
        const holdId = `h${++ids}`;
        return turn && 'reserve' in turn
          ? { admitted: true, holdId, reserveId: `r${ids}` }
          : { admitted: true, holdId };
      },
      release: async (...holdIds) => {
        released.push(holdIds);
      },
      usage: async () => [],
    };
    return { ledger, asked, released };
  }
  const policy = {
    prices: PRICES,
    caps: [{ per: 'channel' as const, period: 'day' as const, tokens: 10_000 }],
  };

  it('reserves the rest of the turn at its first request, draws later requests from that reserve, and releases the reserve and every hold when the turn ends', async () => {
    const { ledger, asked, released } = recording();
    const spend = turnSpend(spender, policy, ledger, now);
    expect(await spend.admit!('cheap', 500)).toEqual({ holdId: 'h1' });
    expect(await spend.admit!('cheap', 700)).toEqual({ holdId: 'h2' });
    expect(asked).toEqual([
      {
        hold: { tokens: 500, cost: (500 * 2) / 1e6 },
        turn: {
          reserve: {
            tokens: 500 * (TURN_REQUESTS - 1),
            cost: (500 * 2 * (TURN_REQUESTS - 1)) / 1e6,
          },
        },
      },
      { hold: { tokens: 700, cost: (700 * 2) / 1e6 }, turn: { reserveId: 'r1' } },
    ]);
    await spend.end!();
    expect(released).toEqual([['r1', 'h1', 'h2']]);
    // The next run of the same turn (after an approval, at the console) reserves again.
    expect(await spend.admit!(undefined, 100)).toEqual({ holdId: 'h3' });
    expect(asked.at(-1)!.turn).toEqual({
      reserve: { tokens: 100 * (TURN_REQUESTS - 1), cost: (100 * 10 * (TURN_REQUESTS - 1)) / 1e6 },
    });
    await spend.end!();
    expect(released.at(-1)).toEqual(['r3', 'h3']);
  });

  it('refuses a turn that does not fit beside the turns under way with what was spent, naming what they hold', async () => {
    const { ledger, released } = recording({ spent: 6_000, held: 3_500 });
    const spend = turnSpend(spender, policy, ledger, now);
    expect(await spend.admit!('cheap', 500)).toEqual({
      refusal:
        'This channel has too little left of its cap of 10,000 tokens a day for another answer now (6,000 tokens used; answers under way hold 3,500 tokens more). Try again once they finish, or after it resets at 00:00 UTC, in 14 h 0 min.',
    });
    await spend.end!();
    expect(released).toEqual([[]]);
  });

  it('ends quietly when the database is away: what it held expires', async () => {
    const { ledger } = recording();
    const spend = turnSpend(
      spender,
      policy,
      {
        ...ledger,
        release: async () => {
          throw new Error('down');
        },
      },
      now,
    );
    await spend.admit!('cheap', 500);
    await expect(spend.end!()).resolves.toBeUndefined();
  });
});

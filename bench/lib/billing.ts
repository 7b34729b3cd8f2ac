/**
 * What a request costs, counted two ways: raw input tokens (o200k), and billed tokens with
 * OpenAI's prompt caching, where the part of a request identical to the start of the previous
 * one (tools, then messages, whole messages compared) is cached from 1,024 tokens on, in steps of
 * 128, and billed at CACHED_RATE of the input price.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ChatRequest } from '../../test/support/fake-openai.ts';

/**
 * gpt-5.4-mini: $0.75 per million input tokens, $0.075 cached (OpenAI's pricing page, November
 * 2026).
 */
export const CACHED_RATE = 0.1;

const counted = new Map<string, number>();
const tokens = (text: string) =>
  counted.get(text) ?? counted.set(text, countTokens(text)).get(text)!;

export interface Cost {
  raw: number;
  cached: number;
  billed: number;
}

const partsOf = (request?: ChatRequest) =>
  request
    ? [JSON.stringify(request.tools ?? []), ...request.messages.map((m) => JSON.stringify(m))]
    : [];

/** How many leading messages `request` shares with `previous` (tools first, then messages). */
export function sharedMessages(request: ChatRequest, previous?: ChatRequest): number {
  const [parts, before] = [partsOf(request), partsOf(previous)];
  let i = 0;
  while (i < parts.length && parts[i] === before[i]) i++;
  return i;
}

/** The cost of `request` sent after `previous` by the same bot. */
export function requestCost(request: ChatRequest, previous?: ChatRequest): Cost {
  const parts = partsOf(request);
  const prefix = parts
    .slice(0, sharedMessages(request, previous))
    .reduce((n, p) => n + tokens(p), 0);
  const raw = parts.reduce((n, p) => n + tokens(p), 0);
  const cached = prefix >= 1_024 ? Math.floor(prefix / 128) * 128 : 0;
  return { raw, cached, billed: raw - cached + cached * CACHED_RATE };
}

export const addCosts = (costs: Cost[]): Cost =>
  costs.reduce(
    (a, c) => ({ raw: a.raw + c.raw, cached: a.cached + c.cached, billed: a.billed + c.billed }),
    { raw: 0, cached: 0, billed: 0 },
  );

import type { Policy, PolicyRule } from './policy.ts';
import type { SpendPolicy } from './spend.ts';

const STRINGS = ['systemPrompt', 'systemPromptAddition', 'model', 'greeting'] as const;
const LISTS = ['tools', 'users', 'roles', 'approve', 'approvers'] as const;
const FLAGS = ['apps', 'unfurl'] as const;
const MATCH = ['platform', 'workspace', 'channel'] as const;
const PLATFORMS = ['slack', 'discord', 'console'];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The policy file's content as a Policy, or every problem with it, each named by its path
 * (`rules[2].tools[0]`), so that one edit fixes them all.
 */
export function parsePolicy(json: unknown): { policy: Policy } | { problems: string[] } {
  const problems: string[] = [];
  if (!isObject(json) || !Array.isArray(json.rules))
    return { problems: ['must be an object with a "rules" array'] };
  for (const key of Object.keys(json))
    if (!TOP.includes(key))
      problems.push(`${key}: is not a setting of the policy (${TOP.join(', ')} are)`);
  const rules = json.rules.flatMap((rule: unknown, i): PolicyRule[] => {
    const found = ruleProblems(rule, `rules[${i}]`);
    problems.push(...found);
    return isObject(rule) && isObject(rule.match) ? [rule as unknown as PolicyRule] : [];
  });
  problems.push(...spendProblems(json));
  if (problems.length > 0) return { problems };
  const { prices, currency, admins, caps } = json as SpendPolicy;
  return {
    policy: {
      rules,
      ...(prices ? { prices } : {}),
      ...(currency ? { currency } : {}),
      ...(admins ? { admins } : {}),
      ...(caps ? { caps } : {}),
    },
  };
}

const TOP = ['rules', 'prices', 'currency', 'admins', 'caps'];
const RATES = ['input', 'cachedInput', 'output'];
const CAP_KEYS = ['per', 'period', 'tokens', 'spend', 'match'];
const isAmount = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;

/** Every problem with the price table, the admins and the caps. */
function spendProblems(json: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if ('currency' in json && (typeof json.currency !== 'string' || !json.currency))
    problems.push('currency: must be a non-empty string (USD, EUR)');
  if ('admins' in json && !isStringList(json.admins))
    problems.push('admins: must be a list of user ids');
  if ('prices' in json) {
    if (!isObject(json.prices)) problems.push('prices: must map model names to their prices');
    else
      for (const [model, price] of Object.entries(json.prices)) {
        if (!isObject(price))
          problems.push(`prices.${model}: must be { input, output, cachedInput }`);
        else {
          for (const key of Object.keys(price))
            if (!RATES.includes(key))
              problems.push(`prices.${model}.${key}: is not one of ${RATES.join(', ')}`);
          for (const key of RATES)
            if ((key in price || key !== 'cachedInput') && !isAmount(price[key]))
              problems.push(
                `prices.${model}.${key}: must be a price per million tokens, 0 or more`,
              );
        }
      }
  }
  if ('caps' in json) {
    if (!Array.isArray(json.caps)) problems.push('caps: must be a list');
    else
      json.caps.forEach((cap: unknown, i) =>
        problems.push(...capProblems(cap, `caps[${i}]`, json)),
      );
  }
  return problems;
}

function capProblems(cap: unknown, at: string, json: Record<string, unknown>): string[] {
  if (!isObject(cap)) return [`${at}: must be an object`];
  const problems = Object.keys(cap)
    .filter((key) => !CAP_KEYS.includes(key))
    .map((key) => `${at}.${key}: is not a setting of a cap (${CAP_KEYS.join(', ')} are)`);
  if (!['channel', 'user', 'workspace'].includes(cap.per as string))
    problems.push(`${at}.per: must be channel, user or workspace`);
  if (!['day', 'month'].includes(cap.period as string))
    problems.push(`${at}.period: must be day or month`);
  if ('tokens' in cap === 'spend' in cap) problems.push(`${at}: must set one of tokens and spend`);
  if ('tokens' in cap && !(Number.isInteger(cap.tokens) && (cap.tokens as number) > 0))
    problems.push(`${at}.tokens: must be a whole number above 0`);
  if ('spend' in cap && !(isAmount(cap.spend) && (cap.spend as number) > 0))
    problems.push(`${at}.spend: must be an amount above 0`);
  if ('spend' in cap && !isObject(json.prices))
    problems.push(`${at}.spend: needs the prices table, to price what is spent`);
  if ('match' in cap) {
    if (isObject(cap.match)) problems.push(...matchProblems(cap.match, `${at}.match`));
    else problems.push(`${at}.match: must be an object naming a platform, workspace or channel`);
  }
  return problems;
}

const isStringList = (value: unknown) =>
  Array.isArray(value) && value.every((item) => typeof item === 'string' && item);

/** Every problem with one rule, each named by its path (`at` is the rule's own). */
function ruleProblems(rule: unknown, at: string): string[] {
  if (!isObject(rule)) return [`${at}: must be an object`];
  const problems: string[] = [];
  for (const key of Object.keys(rule)) {
    if (
      key !== 'match' &&
      key !== 'suggestedPrompts' &&
      key !== 'reactions' &&
      ![...STRINGS, ...LISTS, ...FLAGS].includes(key as never)
    )
      problems.push(`${at}.${key}: is not a setting of a rule`);
  }
  if (!isObject(rule.match))
    return [...problems, `${at}.match: must be an object naming a platform, workspace or channel`];
  problems.push(...matchProblems(rule.match, `${at}.match`));
  for (const key of STRINGS)
    if (key in rule && (typeof rule[key] !== 'string' || !rule[key]))
      problems.push(`${at}.${key}: must be a non-empty string`);
  for (const key of FLAGS)
    if (key in rule && typeof rule[key] !== 'boolean')
      problems.push(`${at}.${key}: must be true or false`);
  if ('suggestedPrompts' in rule) problems.push(...promptProblems(rule.suggestedPrompts, at));
  if ('reactions' in rule) problems.push(...reactionProblems(rule.reactions, `${at}.reactions`));
  for (const key of LISTS) {
    if (!(key in rule)) continue;
    const list = rule[key];
    if (!Array.isArray(list)) problems.push(`${at}.${key}: must be a list of strings`);
    else
      list.forEach((item, j) => {
        if (typeof item !== 'string' || !item)
          problems.push(`${at}.${key}[${j}]: must be a non-empty string`);
      });
  }
  return problems;
}

function matchProblems(match: Record<string, unknown>, at: string): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(match)) {
    if (!(MATCH as readonly string[]).includes(key))
      problems.push(`${at}.${key}: is not one of ${MATCH.join(', ')}`);
    else if (typeof value !== 'string' || !value)
      problems.push(`${at}.${key}: must be a non-empty string`);
  }
  if (typeof match.platform === 'string' && !PLATFORMS.includes(match.platform))
    problems.push(`${at}.platform: must be one of ${PLATFORMS.join(', ')}`);
  return problems;
}

/** Slack offers at most four prompts, each a title and the message it sends. */
const MAX_PROMPTS = 4;

function promptProblems(prompts: unknown, at: string): string[] {
  const where = `${at}.suggestedPrompts`;
  if (!Array.isArray(prompts) || prompts.length > MAX_PROMPTS)
    return [`${where}: must be a list of at most ${MAX_PROMPTS} { title, message }`];
  return prompts.flatMap((prompt: unknown, i) =>
    isObject(prompt) &&
    Object.keys(prompt).every((key) => key === 'title' || key === 'message') &&
    typeof prompt.title === 'string' &&
    prompt.title &&
    typeof prompt.message === 'string' &&
    prompt.message
      ? []
      : [`${where}[${i}]: must be { title, message }, both non-empty strings`],
  );
}

/**
 * An emoji as a policy names it: a name (Slack's `mag`, `+1`; a Discord server's own emoji,
 * `partyparrot`; no colons), or the emoji itself (`🔍`, as Discord sends a Unicode emoji).
 */
const EMOJI_NAME = /^[A-Za-z0-9_+'-]+$/;
const EMOJI_ITSELF =
  /^(?:\p{Extended_Pictographic}|\p{Regional_Indicator})(?:\p{Extended_Pictographic}|\p{Emoji_Component}|\u200D|\uFE0F)*$/u;

/** `reactions` maps emoji (see EMOJI_NAME) to the prompts they ask. */
function reactionProblems(reactions: unknown, at: string): string[] {
  if (!isObject(reactions)) return [`${at}: must map emoji names to prompts`];
  return Object.entries(reactions).flatMap(([emoji, prompt]) => [
    ...(EMOJI_NAME.test(emoji) || EMOJI_ITSELF.test(emoji)
      ? []
      : [
          `${at}.${emoji}: is not an emoji name (mag, +1, eyes; no colons) or an emoji itself (🔍)`,
        ]),
    ...(typeof prompt === 'string' && prompt.trim()
      ? []
      : [`${at}.${emoji}: must be a non-empty prompt`]),
  ]);
}

import type { Policy, PolicyRule } from './policy.ts';

const STRINGS = ['systemPrompt', 'systemPromptAddition', 'model'] as const;
const LISTS = ['tools', 'users', 'roles', 'approve', 'approvers'] as const;
const FLAGS = ['apps'] as const;
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
    if (key !== 'rules') problems.push(`${key}: is not a setting of the policy (rules is)`);
  const rules = json.rules.flatMap((rule: unknown, i): PolicyRule[] => {
    const found = ruleProblems(rule, `rules[${i}]`);
    problems.push(...found);
    return isObject(rule) && isObject(rule.match) ? [rule as unknown as PolicyRule] : [];
  });
  return problems.length > 0 ? { problems } : { policy: { rules } };
}

/** Every problem with one rule, each named by its path (`at` is the rule's own). */
function ruleProblems(rule: unknown, at: string): string[] {
  if (!isObject(rule)) return [`${at}: must be an object`];
  const problems: string[] = [];
  for (const key of Object.keys(rule)) {
    if (key !== 'match' && ![...STRINGS, ...LISTS, ...FLAGS].includes(key as never))
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

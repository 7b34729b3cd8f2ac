import type { Policy, PolicyRule } from './policy.ts';

const STRINGS = ['systemPrompt', 'systemPromptAddition', 'model'] as const;
const LISTS = ['tools', 'users', 'roles', 'approve', 'approvers'] as const;
const MATCH = ['platform', 'workspace', 'channel'] as const;
const PLATFORMS = ['slack', 'discord', 'console'];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The policy file's content as a Policy, or every problem with it, each named by its path
 * (`rules[2].tools[0]`), so that one edit fixes them all.
 */
export function parsePolicy(json: unknown): { policy: Policy } | { problems: string[] } {
  const problems: string[] = [];
  if (!isObject(json) || !Array.isArray(json.rules)) return { problems: ['must be an object with a "rules" array'] };
  for (const key of Object.keys(json)) if (key !== 'rules') problems.push(`${key}: is not a setting of the policy (rules is)`);
  const rules = json.rules.flatMap((rule: unknown, i): PolicyRule[] => {
    const at = `rules[${i}]`;
    if (!isObject(rule)) {
      problems.push(`${at}: must be an object`);
      return [];
    }
    for (const key of Object.keys(rule)) {
      if (key !== 'match' && !(STRINGS as readonly string[]).includes(key) && !(LISTS as readonly string[]).includes(key)) problems.push(`${at}.${key}: is not a setting of a rule`);
    }
    if (!isObject(rule.match)) {
      problems.push(`${at}.match: must be an object naming a platform, workspace or channel`);
      return [];
    }
    for (const key of Object.keys(rule.match)) {
      const value = rule.match[key];
      if (!(MATCH as readonly string[]).includes(key)) problems.push(`${at}.match.${key}: is not one of ${MATCH.join(', ')}`);
      else if (typeof value !== 'string' || !value) problems.push(`${at}.match.${key}: must be a non-empty string`);
    }
    if (typeof rule.match.platform === 'string' && !PLATFORMS.includes(rule.match.platform)) problems.push(`${at}.match.platform: must be one of ${PLATFORMS.join(', ')}`);
    for (const key of STRINGS) if (key in rule && (typeof rule[key] !== 'string' || !rule[key])) problems.push(`${at}.${key}: must be a non-empty string`);
    for (const key of LISTS) {
      if (!(key in rule)) continue;
      const list = rule[key];
      if (!Array.isArray(list)) problems.push(`${at}.${key}: must be a list of strings`);
      else list.forEach((item, j) => {
        if (typeof item !== 'string' || !item) problems.push(`${at}.${key}[${j}]: must be a non-empty string`);
      });
    }
    return [rule as unknown as PolicyRule];
  });
  return problems.length > 0 ? { problems } : { policy: { rules } };
}

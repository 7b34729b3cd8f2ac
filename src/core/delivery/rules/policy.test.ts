import { describe, expect, it } from 'vitest';
import { policyFor, serverAllowed, toolAllowed, type Policy } from './policy.ts';
import { parsePolicy } from './policy-file.ts';

const lane = (workspace: string, channel: string) => ({ platform: 'slack', workspace, channel });

describe('policyFor', () => {
  const policy: Policy = {
    rules: [
      { match: { channel: 'C1' }, model: 'channel-model' },
      {
        match: { platform: 'slack' },
        model: 'slack-model',
        tools: ['search_history'],
        systemPromptAddition: 'Be brief.',
      },
      { match: { platform: 'slack', workspace: 'T1' }, tools: ['fs__*'], users: ['U1'] },
      { match: { platform: 'slack', workspace: 'T1' }, users: ['U2'] },
    ],
  };

  it('takes each field from the most specific rule that sets it, a later rule breaking a tie', () => {
    expect(policyFor(policy, lane('T1', 'C1'))).toEqual({
      model: 'channel-model',
      tools: ['fs__*'],
      systemPromptAddition: 'Be brief.',
      users: ['U2'],
    });
    expect(policyFor(policy, lane('T2', 'C9'))).toEqual({
      model: 'slack-model',
      tools: ['search_history'],
      systemPromptAddition: 'Be brief.',
    });
    expect(policyFor(policy, { platform: 'discord', workspace: 'G', channel: 'C1' })).toEqual({
      model: 'channel-model',
    });
    expect(policyFor(undefined, lane('T1', 'C1'))).toEqual({});
  });
});

describe('toolAllowed', () => {
  it('matches names, with * for any run of characters, and allows all without a list', () => {
    expect(toolAllowed(['fs__*', 'search_history'], 'fs__read_text_file')).toBe(true);
    expect(toolAllowed(['fs__*', 'search_history'], 'search_history')).toBe(true);
    expect(toolAllowed(['fs__*', 'search_history'], 'github__create_issue')).toBe(false);
    expect(toolAllowed(['fs__*'], 'xfs__read')).toBe(false);
    expect(toolAllowed(['a.b'], 'aXb')).toBe(false);
    expect(toolAllowed(undefined, 'anything')).toBe(true);
  });
});

describe('parsePolicy', () => {
  it('accepts a well-formed file', () => {
    const json = {
      rules: [
        {
          match: { platform: 'discord', workspace: 'G1' },
          systemPrompt: 'You help the ops team.',
          tools: ['ops__*'],
          roles: ['R1'],
        },
      ],
    };
    expect(parsePolicy(json)).toEqual({ policy: json });
  });

  it('reads the price table, the admins and the caps', () => {
    const spend = {
      prices: { 'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 } },
      currency: 'USD',
      admins: ['U1'],
      caps: [
        { per: 'user', period: 'day', spend: 5, match: { platform: 'slack' } },
        { per: 'channel', period: 'month', tokens: 2_000_000 },
      ],
    };
    expect(parsePolicy({ rules: [], ...spend })).toEqual({ policy: { rules: [], ...spend } });
  });

  it('names every bad price and cap by its path', () => {
    expect(
      parsePolicy({
        rules: [],
        currency: '',
        admins: 'U1',
        prices: { 'gpt-4o': { input: -1, output: 'ten', per: 1 }, other: 3 },
        caps: [
          { per: 'team', period: 'week', tokens: 10, spend: 1 },
          { per: 'user', period: 'day', tokens: 1.5, match: { room: 'x' } },
          { per: 'channel', period: 'month' },
          'no',
        ],
      }),
    ).toEqual({
      problems: [
        'currency: must be a non-empty string (USD, EUR)',
        'admins: must be a list of user ids',
        'prices.gpt-4o.per: is not one of input, cachedInput, output',
        'prices.gpt-4o.input: must be a price per million tokens, 0 or more',
        'prices.gpt-4o.output: must be a price per million tokens, 0 or more',
        'prices.other: must be { input, output, cachedInput }',
        'caps[0].per: must be channel, user or workspace',
        'caps[0].period: must be day or month',
        'caps[0]: must set one of tokens and spend',
        'caps[1].tokens: must be a whole number above 0',
        'caps[1].match.room: is not one of platform, workspace, channel',
        'caps[2]: must set one of tokens and spend',
        'caps[3]: must be an object',
      ],
    });
    expect(parsePolicy({ rules: [], caps: [{ per: 'user', period: 'day', spend: 1 }] })).toEqual({
      problems: ['caps[0].spend: needs the prices table, to price what is spent'],
    });
  });

  it('names every bad entry by its path', () => {
    const json = {
      rules: [
        { match: { platform: 'teams', room: 'x' }, model: '', tools: 'fs__*' },
        'not a rule',
        {
          match: { channel: 'C1' },
          users: ['U1', 7],
          approvers: 'U1',
          approve: ['deploy', ''],
          escalate: true,
        },
        { model: 'm' },
      ],
      defaults: {},
    };
    expect(parsePolicy(json)).toEqual({
      problems: [
        'defaults: is not a setting of the policy (rules, prices, currency, admins, caps are)',
        'rules[0].match.room: is not one of platform, workspace, channel',
        'rules[0].match.platform: must be one of slack, discord, console',
        'rules[0].model: must be a non-empty string',
        'rules[0].tools: must be a list of strings',
        'rules[1]: must be an object',
        'rules[2].escalate: is not a setting of a rule',
        'rules[2].users[1]: must be a non-empty string',
        'rules[2].approve[1]: must be a non-empty string',
        'rules[2].approvers: must be a list of strings',
        'rules[3].match: must be an object naming a platform, workspace or channel',
      ],
    });
    expect(parsePolicy([])).toEqual({ problems: ['must be an object with a "rules" array'] });
  });

  it('takes unfurl, a channel letting Slack preview the links in replies, as true or false only', () => {
    const allowed = { rules: [{ match: { platform: 'slack', channel: 'C1' }, unfurl: true }] };
    expect(parsePolicy(allowed)).toEqual({ policy: allowed });
    expect(policyFor(allowed, { platform: 'slack', workspace: 'T1', channel: 'C1' }).unfurl).toBe(
      true,
    );
    expect(policyFor(allowed, { platform: 'slack', workspace: 'T1', channel: 'C2' }).unfurl).toBe(
      undefined,
    );
    expect(parsePolicy({ rules: [{ match: { channel: 'C1' }, unfurl: 'yes' }] })).toEqual({
      problems: ['rules[0].unfurl: must be true or false'],
    });
  });

  it("takes a channel's agent-view greeting and up to four suggested prompts, naming bad ones", () => {
    const prompts = [{ title: 'Open incidents', message: 'Which incidents are open?' }];
    const good = {
      rules: [{ match: { channel: 'C1' }, greeting: 'Hi', suggestedPrompts: prompts }],
    };
    expect(parsePolicy(good)).toEqual({ policy: good });
    const five = Array.from({ length: 5 }, () => prompts[0]);
    expect(
      parsePolicy({
        rules: [
          { match: { channel: 'C1' }, suggestedPrompts: five },
          { match: { channel: 'C2' }, greeting: '', suggestedPrompts: [{ title: 'x' }] },
        ],
      }),
    ).toEqual({
      problems: [
        'rules[0].suggestedPrompts: must be a list of at most 4 { title, message }',
        'rules[1].greeting: must be a non-empty string',
        'rules[1].suggestedPrompts[0]: must be { title, message }, both non-empty strings',
      ],
    });
  });
});

describe('reactions', () => {
  it('maps emoji to prompts per rule, the most specific rule’s map winning', () => {
    const parsed = parsePolicy({
      rules: [
        { match: {}, reactions: { mag: 'Look into this message and say what you find' } },
        { match: { platform: 'slack', channel: 'C0OPS' }, reactions: { '+1': 'Summarise it' } },
      ],
    });
    expect('policy' in parsed).toBe(true);
    if (!('policy' in parsed)) return;
    const lane = { platform: 'slack', workspace: 'T1', channel: 'C0OPS' };
    expect(policyFor(parsed.policy, lane).reactions).toEqual({ '+1': 'Summarise it' });
    expect(policyFor(parsed.policy, { ...lane, channel: 'C0DEV' }).reactions).toEqual({
      mag: 'Look into this message and say what you find',
    });
  });

  it('takes an emoji itself, as Discord sends a Unicode one, and a Discord server’s own emoji by name', () => {
    const reactions = { '🔍': 'a', '👍🏽': 'b', '❤️': 'c', '🇫🇷': 'd', PartyParrot: 'e' };
    expect(parsePolicy({ rules: [{ match: {}, reactions }] })).toEqual({
      policy: { rules: [{ match: {}, reactions }] },
    });
    expect(parsePolicy({ rules: [{ match: {}, reactions: { 'a🔍': 'x' } }] })).toHaveProperty(
      'problems',
    );
  });

  it('names every bad reaction by its path', () => {
    expect(
      parsePolicy({
        rules: [
          { match: {}, reactions: ['mag'] },
          { match: {}, reactions: { ':mag:': 'x', eyes: '', ok: 3 } },
        ],
      }),
    ).toEqual({
      problems: [
        'rules[0].reactions: must map emoji names to prompts',
        'rules[1].reactions.:mag:: is not an emoji name (mag, +1, eyes; no colons) or an emoji itself (🔍)',
        'rules[1].reactions.eyes: must be a non-empty prompt',
        'rules[1].reactions.ok: must be a non-empty prompt',
      ],
    });
  });
});

describe('serverAllowed', () => {
  it("reads a channel's tool patterns as the MCP servers they reach", () => {
    expect(serverAllowed(undefined, 'github')).toBe(true);
    expect(serverAllowed(['*'], 'github')).toBe(true);
    expect(serverAllowed(['fs__*', 'get_continuation'], 'github')).toBe(false);
    expect(serverAllowed(['fs__*'], 'fs')).toBe(true);
    expect(serverAllowed(['github__get_issue'], 'github')).toBe(true);
    expect(serverAllowed(['git*'], 'github')).toBe(true);
    expect(serverAllowed(['github*'], 'git')).toBe(false);
    expect(serverAllowed([], 'fs')).toBe(false);
  });
});

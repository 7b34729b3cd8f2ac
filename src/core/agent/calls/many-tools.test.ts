import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SYSTEM_PROMPT } from '../settings.ts';
import { DEFAULT_TOOL_OFFER, offeredTools } from './tool-offer.ts';
import { MANY_TOOLS } from '../../../../test/support/many-tools.ts';
import { findToolsTool } from '../../builtins/find-tools.ts';
import { loadToolsTool } from '../../builtins/load-tools.ts';
import type { Message } from '../../ports/conversation.ts';
import type { ToolContext, ToolSpec } from '../../ports/tools.ts';

/**
 * The goals of issue 56 for 200 tools, with Spool's defaults: what a small-talk request costs
 * (o200k, as OpenAI's current models count), how many requests reach a tool, and whether a search
 * with a person's words finds the tool they need.
 */
const finder = findToolsTool(() => MANY_TOOLS);
const loader = loadToolsTool(() => MANY_TOOLS);
const builtins = [loader.spec, finder.spec];
const context = {} as ToolContext;

/** A request's prompt as Chat Completions sends it, counted by o200k. */
function promptTokens(tools: ToolSpec[], transcript: Message[]): number {
  const request = {
    messages: [
      { role: 'system', content: DEFAULT_SYSTEM_PROMPT },
      ...transcript.map((m) => ({ role: m.role, content: m.content })),
    ],
    tools: offeredTools(tools, transcript, DEFAULT_TOOL_OFFER).map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    })),
  };
  return countTokens(JSON.stringify(request));
}

const user = (content: string): Message => ({ role: 'user', content, turn: 1 });

let ids = 0;
/** The model's find_tools call and its result, as the agent stores them. */
async function find(query: string): Promise<Message[]> {
  const id = `call_${ids++}`;
  const { content } = await finder.run({ query }, context);
  return [
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id, name: 'find_tools', arguments: JSON.stringify({ query }) }],
      turn: 1,
    },
    { role: 'tool', toolCallId: id, content, turn: 1 },
  ];
}

const offeredNames = (transcript: Message[]) =>
  offeredTools([...builtins, ...MANY_TOOLS], transcript, DEFAULT_TOOL_OFFER).map((t) => t.name);

describe('200 tools, by default', () => {
  it('keeps a small-talk request within 1.3× of its size with 5 tools', () => {
    const talk = [user('Thanks, that is all for now!')];
    const five = promptTokens([...builtins, ...MANY_TOOLS.slice(0, 5)], talk);
    const all = promptTokens([...builtins, ...MANY_TOOLS], talk);
    expect(offeredNames(talk)).toEqual(['find_tools']);
    expect(all / five).toBeLessThanOrEqual(1.3);
  });

  it('reaches any of the 200 in at most 2 extra requests, the tools growing only at their end', async () => {
    for (const tool of MANY_TOOLS) {
      // A model that searches with what the tool does, then, if that missed, with its name.
      const transcript = [user(`Please ${tool.description}`)];
      const offers = [offeredNames(transcript)];
      for (const query of [tool.description, tool.name]) {
        if (offers.at(-1)!.includes(tool.name)) break;
        transcript.push(...(await find(query)));
        offers.push(offeredNames(transcript));
      }
      expect(offers.at(-1), tool.name).toContain(tool.name);
      expect(offers.length - 1).toBeLessThanOrEqual(2);
      for (const [i, offer] of offers.slice(1).entries())
        expect(offer.slice(0, offers[i]!.length)).toEqual(offers[i]);
    }
  });

  // What people ask in their own words, never a tool's name, and the tool that does it.
  const REQUESTS: Array<[words: string, tool: string]> = [
    ['Open a Jira ticket for the broken login page, high priority', 'jira__create_ticket'],
    ['Who is on call for payments tonight?', 'pagerduty__get_oncall'],
    ['Can you refund the customer who was charged twice?', 'stripe__create_refund'],
    [
      'Book a meeting with Ana and Raj next week when everyone is available',
      'calendar__find_free_time',
    ],
    ['What will the weather be like in Lisbon tomorrow?', 'web__get_weather'],
    [
      'Roll back the checkout deployment to the previous version, it is crashing',
      'kubernetes__rollback_deployment',
    ],
    ['Why is the orders query so slow? Show me its plan', 'postgres__explain_query'],
    ['How much did we spend on AWS last month?', 'aws__get_cost_and_usage'],
    ['Translate this paragraph into Japanese', 'web__translate_text'],
    ['Merge the pull request once the checks are green', 'github__merge_pull_request'],
    ['Show me the stack trace of the newest error in the mobile app', 'sentry__get_issue_details'],
    ['Mute the disk space monitor for an hour, it keeps paging', 'datadog__mute_monitor'],
    ['Post to the #general channel that the release is out', 'slack__post_message'],
    ['Export the design frames as PNG images', 'figma__export_images'],
    ['Add a private note to the support ticket for the team', 'zendesk__add_internal_note'],
    ['Share the budget spreadsheet folder with Maria as an editor', 'gdrive__share_file'],
    ["How many dollars is 250 euros at today's exchange rate?", 'web__convert_currency'],
    ['Update the Acme opportunity to closed won, amount 40k', 'salesforce__update_opportunity'],
    ['I am away next week: set my out of office', 'calendar__set_out_of_office'],
    [
      'Who is using the most disk space in the database? Which tables are biggest?',
      'postgres__table_sizes',
    ],
  ];

  it('finds the tool a person needs from their words, 20 of 20', async () => {
    const found = [];
    for (const [words] of REQUESTS) {
      // A model that passes on the person's words and calls the top hit.
      const [, result] = await find(words);
      found.push(result!.content.split('\n')[1]);
    }
    expect(found).toEqual(REQUESTS.map(([, tool]) => tool));
  });
});

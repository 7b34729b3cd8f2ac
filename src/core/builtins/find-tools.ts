import { foundToolsResult, isLoadable } from '../agent/calls/tool-offer.ts';
import { searchTools } from '../agent/calls/tool-search.ts';
import { errorResult, type Tool, type ToolOutcome, type ToolSpec } from '../ports/tools.ts';

/** The tools one search loads: enough that the right one is among them, few enough to be cheap. */
const FOUND_TOOLS = 5;

/**
 * find_tools, a built-in tool like any other: offered in place of load_tools and its catalogue
 * once the server tools pass TOOL_CATALOGUE_MAX_TOOLS (`offeredTools`). It searches the tools'
 * names and whole descriptions for the model's words and names the best few in its result; what
 * the conversation has loaded is read from those results in the transcript, so their schemas are
 * in every request from the next on. `list` gives the tools there are; the channel's policy
 * (`ToolContext.offers`) which of them it may search.
 */
export function findToolsTool(list: () => ToolSpec[]): Tool<ToolOutcome> {
  return {
    spec: {
      name: 'find_tools',
      description:
        'Find the tools for a task: searches every tool by name and description for your words ' +
        "(say what the person wants done, in their words and a tool's). The best few are loaded: " +
        'their schemas are in your tools from your next step on.',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'What the tool should do.' },
        },
        required: ['query'],
        additionalProperties: false,
      },
      flags: { findsTools: true, freeIteration: true },
    },
    async run(args, context) {
      const query = typeof args.query === 'string' ? args.query.trim() : '';
      if (!query) return errorResult('Say in `query` what the tool should do.');
      // A tool the channel's policy hides is no tool here, whatever the registry holds.
      const offered = list().filter((t) => isLoadable(t) && (context.offers?.(t.name) ?? true));
      const found = searchTools(query, offered, FOUND_TOOLS).map((t) => t.name);
      return { content: foundToolsResult(found), isError: false };
    },
  };
}

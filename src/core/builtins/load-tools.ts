import { requestedNames, resolveToolNames } from '../agent/calls/tool-offer.ts';
import { errorResult, type Tool, type ToolOutcome, type ToolSpec } from '../ports/tools.ts';

/**
 * load_tools, a built-in tool like any other: offered only once the tools' schemas pass
 * TOOL_SCHEMAS_MAX_TOKENS, when its description lists the server tools the request leaves out
 * (`offeredTools`). Its run only says which names are tools: what the conversation has loaded is
 * read from its calls in the transcript, so the schemas are in every request from the next on.
 * `list` gives the tools there are; the channel's policy (`ToolContext.offers`) which of them it
 * may load.
 */
export function loadToolsTool(list: () => ToolSpec[]): Tool<ToolOutcome> {
  return {
    spec: {
      name: 'load_tools',
      description:
        'Load tools before you call them: their schemas are in your tools from your next step on. ' +
        "The tools, by server; a name is its server's prefix and the name listed (fs__read_file):",
      parameters: {
        type: 'object',
        properties: {
          names: { type: 'array', items: { type: 'string' }, description: 'Tool names.' },
        },
        required: ['names'],
        additionalProperties: false,
      },
      flags: { loadsTools: true, freeIteration: true },
    },
    async run(args, context) {
      // A tool the channel's policy hides is no tool here, whatever the registry holds.
      const offered = list().filter((t) => context.offers?.(t.name) ?? true);
      const { found, unknown } = resolveToolNames(requestedNames(args), offered);
      const missing = unknown.length ? ` Not in the list: ${unknown.join(', ')}.` : '';
      if (found.length === 0) return errorResult(`Nothing loaded.${missing}`);
      return {
        content: `Loaded ${found.join(', ')}: call ${found.length === 1 ? 'it' : 'them'} now.${missing}`,
        isError: false,
      };
    },
  };
}

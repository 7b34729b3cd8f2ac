// Apart from sampling.ts, which loads the MCP SDK: mcp.json is read on every start, MCP servers or
// none.

/**
 * What mcp.json lets one server ask of the model (`"sampling"`): at most `maxTokens` a request, at
 * most `perCall` requests in one of its calls.
 */
export interface SamplingLimits {
  maxTokens: number;
  perCall: number;
}

export const DEFAULT_SAMPLING: SamplingLimits = { maxTokens: 1_000, perCall: 3 };

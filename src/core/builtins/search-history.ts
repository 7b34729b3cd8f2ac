import { continuationCall } from '../markers.ts';
import type { HistoryHit, HistorySearchPort } from '../ports/history.ts';
import { errorResult, type Tool, type ToolContext, type ToolOutcome } from '../ports/tools.ts';

const LABEL: Record<HistoryHit['kind'], string> = {
  user: 'USER',
  assistant: 'ASSISTANT',
  tool_call: 'TOOL CALL',
  tool_result: 'TOOL RESULT',
};

const oneLine = (text: string) => JSON.stringify(text.replace(/\s+/g, ' ').trim());

/**
 * Recall hits as text: for the model (search_history) and for people (/recall) alike, with the
 * get_continuation call that reads on.
 */
export function formatHits(query: string, hits: HistoryHit[]): string {
  if (hits.length === 0)
    return `No earlier messages or tool runs in this channel match "${query}".`;
  const blocks = hits.map((hit, i) => {
    const tool = hit.toolName ? ` ${hit.toolName}` : '';
    const id = hit.toolCallId ? ` tool_call_id="${hit.toolCallId}"` : '';
    const lines = [
      `${i + 1}. ${hit.createdAt.toISOString()} thread ${hit.thread} — ${LABEL[hit.kind]}${tool}${id}`,
    ];
    if (hit.before)
      lines.push(`   before: ${hit.before.role.toUpperCase()}: ${oneLine(hit.before.text)}`);
    lines.push(`   match: ${oneLine(hit.excerpt)}`);
    if (hit.after)
      lines.push(`   after: ${hit.after.role.toUpperCase()}: ${oneLine(hit.after.text)}`);
    if (hit.approval)
      lines.push(
        `   approval: ${hit.approval.status}${hit.approval.by ? ` by ${hit.approval.by}` : ''}${hit.approval.at ? ` at ${hit.approval.at.toISOString()}` : ''}`,
      );
    if (hit.offset !== undefined)
      lines.push(`   read on from the match: ${continuationCall(hit.toolCallId!, hit.offset)}`);
    else if (hit.kind === 'tool_call')
      lines.push(`   full result: ${continuationCall(hit.toolCallId!, 0)}`);
    return lines.join('\n');
  });
  return `${hits.length} match${hits.length === 1 ? '' : 'es'} for "${query}", newest first:\n\n${blocks.join('\n\n')}`;
}

export const SEARCH_HISTORY = 'search_history';
const DEFAULT_RESULTS = 10;
const MAX_RESULTS = 50;

export interface SearchHistoryArgs {
  query: string;
  days?: number;
  maxResults: number;
}

export function parseSearchArgs(
  args: Record<string, unknown>,
): SearchHistoryArgs | { error: string } {
  const { query, days, max_results: maxResults = DEFAULT_RESULTS } = args;
  if (typeof query !== 'string' || !query.trim())
    return { error: 'query must be a non-empty string' };
  if (days !== undefined && (typeof days !== 'number' || !(days > 0)))
    return { error: 'days must be a positive number' };
  if (typeof maxResults !== 'number' || !Number.isInteger(maxResults) || maxResults < 1) {
    return { error: `max_results must be a whole number from 1 to ${MAX_RESULTS}` };
  }
  return { query: query.trim(), days, maxResults: Math.min(maxResults, MAX_RESULTS) };
}

/**
 * Recall over this channel's messages and tool runs; scope comes from the conversation, never the
 * model.
 */
export function searchHistoryTool(search: HistorySearchPort): Tool<ToolOutcome> {
  return {
    spec: {
      name: SEARCH_HISTORY,
      description:
        'Search earlier messages and tool runs (calls and their results) in this channel, all threads, newest first. ' +
        'Use it when the user asks about something said or returned earlier. Each tool match gives a tool_call_id for get_continuation.',
      parameters: {
        type: 'object',
        properties: {
          query: {
            type: 'string',
            description: 'Words to look for (all must match; prefixes match too).',
          },
          days: { type: 'number', description: 'Only look this many days back.' },
          max_results: {
            type: 'integer',
            minimum: 1,
            maximum: MAX_RESULTS,
            description: `Default ${DEFAULT_RESULTS}.`,
          },
        },
        required: ['query'],
        additionalProperties: false,
      },
      // Its hits are views of stored rows: never searched themselves, left out once moved past.
      flags: { derived: true, readOnly: true },
      guidance:
        'To recall what was said or what a tool returned earlier in this channel, call search_history.',
    },
    async run(args, context: ToolContext) {
      const parsed = parseSearchArgs(args);
      if ('error' in parsed) return errorResult(parsed.error);
      const hits = await search.searchHistory(context.conversation, {
        text: parsed.query,
        days: parsed.days,
        maxResults: parsed.maxResults,
        excludeTurn: { conversationId: context.conversation.id, turn: context.turn },
      });
      return { content: formatHits(parsed.query, hits), isError: false };
    },
  };
}

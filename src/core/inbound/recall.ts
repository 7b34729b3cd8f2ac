import type { HistoryHit, StoredResult } from '../ports/history.ts';
import type { ReplyPart } from '../ports/inbox.ts';

const LABEL: Record<HistoryHit['kind'], string> = {
  user: 'USER',
  assistant: 'ASSISTANT',
  tool_call: 'TOOL CALL',
  tool_result: 'TOOL RESULT',
};

const oneLine = (text: string) => JSON.stringify(text.replace(/\s+/g, ' ').trim());

/** Recall hits as text: for the model (search_history) and for people (/recall) alike, with the get_continuation call that reads on. */
export function formatHits(query: string, hits: HistoryHit[]): string {
  if (hits.length === 0) return `No earlier messages or tool runs in this channel match "${query}".`;
  const blocks = hits.map((hit, i) => {
    const tool = hit.toolName ? ` ${hit.toolName}` : '';
    const id = hit.toolCallId ? ` tool_call_id="${hit.toolCallId}"` : '';
    const lines = [`${i + 1}. ${hit.createdAt.toISOString()} thread ${hit.thread} — ${LABEL[hit.kind]}${tool}${id}`];
    if (hit.before) lines.push(`   before: ${hit.before.role.toUpperCase()}: ${oneLine(hit.before.text)}`);
    lines.push(`   match: ${oneLine(hit.excerpt)}`);
    if (hit.after) lines.push(`   after: ${hit.after.role.toUpperCase()}: ${oneLine(hit.after.text)}`);
    if (hit.approval) lines.push(`   approval: ${hit.approval.status}${hit.approval.by ? ` by ${hit.approval.by}` : ''}${hit.approval.at ? ` at ${hit.approval.at.toISOString()}` : ''}`);
    if (hit.offset !== undefined) lines.push(`   read on from the match: get_continuation(tool_call_id="${hit.toolCallId}", offset=${hit.offset})`);
    else if (hit.kind === 'tool_call') lines.push(`   full result: get_continuation(tool_call_id="${hit.toolCallId}", offset=0)`);
    return lines.join('\n');
  });
  return `${hits.length} match${hits.length === 1 ? '' : 'es'} for "${query}", newest first:\n\n${blocks.join('\n\n')}`;
}

/** A stored result as a message and the file that holds it, for `/spool result` and its kin; only the message when there is none. */
export function resultAsFile(toolCallId: string, result: StoredResult | undefined): ReplyPart {
  if (!result) return { text: `No tool run with tool_call_id "${toolCallId}" in this channel. Recall shows the ids.` };
  const name = `${toolCallId.replace(/[^\w.-]/g, '_')}.txt`;
  return { text: `The full result of ${result.toolName} (${toolCallId}): ${result.content.length.toLocaleString('en-US')} characters.`, file: { name, content: result.content } };
}

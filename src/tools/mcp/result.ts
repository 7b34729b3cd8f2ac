import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolOutcome } from '../../core/types.ts';

const base64Bytes = (data: string) => Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);

function describeBinary(kind: string, mimeType: string | undefined, data: string, uri?: string): string {
  return `[${kind}${uri ? ` ${uri}` : ''}: ${mimeType ?? 'unknown type'}, ${base64Bytes(data)} bytes, not shown]`;
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

function leaves(value: unknown): string[] {
  if (value === null || typeof value !== 'object') return [String(value)];
  return Object.values(value).flatMap(leaves);
}

/** Structured content that only wraps the text beside it (server-filesystem's `{content}`). */
function wrapsText(structured: unknown, text: string): boolean {
  return text.length > 0 && leaves(structured).every((leaf) => text.includes(leaf));
}

/**
 * What the model reads of an MCP result: text as is, structured content as JSON (unless it only
 * repeats the text, which pages better unescaped), and binary
 * content (images, audio, blobs) only described: base64 in the context is cost with no meaning.
 */
export function toOutcome(result: CallToolResult): ToolOutcome {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    switch (item.type) {
      case 'text':
        if (!(result.structuredContent && sameJson(item.text, result.structuredContent))) parts.push(item.text);
        break;
      case 'image':
      case 'audio':
        parts.push(describeBinary(item.type, item.mimeType, item.data));
        break;
      case 'resource':
        parts.push(
          'text' in item.resource
            ? `[resource ${item.resource.uri}]\n${item.resource.text}`
            : describeBinary('resource', item.resource.mimeType, String(item.resource.blob), item.resource.uri),
        );
        break;
      case 'resource_link':
        parts.push(`[resource link ${item.uri}${item.name ? ` (${item.name})` : ''}]`);
        break;
    }
  }
  if (result.structuredContent && !wrapsText(result.structuredContent, parts.join('\n'))) parts.push(JSON.stringify(result.structuredContent, null, 2));
  const content = parts.join('\n') || (result.isError ? 'The tool reported an error without details.' : '(no output)');
  return { content: result.isError ? JSON.stringify({ error: content }) : content, isError: Boolean(result.isError) };
}

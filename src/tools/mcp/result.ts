import type { CallToolResult } from '@modelcontextprotocol/client';
import { errorResult, type BinaryPart, type ToolOutcome } from '../../core/ports/tools.ts';

const base64Bytes = (data: string) =>
  Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** Walks of structured content are iterative: a server may nest it deeper than the stack goes. */
function leaves(value: unknown): string[] {
  const out: string[] = [];
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') out.push(String(v));
    else for (const child of Object.values(v)) stack.push(child);
  }
  return out;
}

/** How deeply `value` nests, counted no further than `cap`. */
function depthOf(value: unknown, cap: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0 && deepest <= cap) {
    const [v, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    if (v !== null && typeof v === 'object')
      for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** JSON.stringify without recursion (which overflows the stack some thousands of levels down). */
function compactJson(value: unknown): string {
  type Task = { text: string } | { value: unknown };
  const out: string[] = [];
  const tasks: Task[] = [{ value }];
  while (tasks.length > 0) {
    const task = tasks.pop()!;
    if ('text' in task) {
      out.push(task.text);
      continue;
    }
    const v = task.value;
    if (v === null || typeof v !== 'object') {
      out.push(JSON.stringify(v) ?? 'null');
      continue;
    }
    const isArray = Array.isArray(v);
    const next: Task[] = [{ text: isArray ? '[' : '{' }];
    Object.entries(v).forEach(([key, child], i) => {
      if (i > 0) next.push({ text: ',' });
      if (!isArray) next.push({ text: `${JSON.stringify(key)}:` });
      next.push({ value: child });
    });
    next.push({ text: isArray ? ']' : '}' });
    for (let i = next.length - 1; i >= 0; i--) tasks.push(next[i]!);
  }
  return out.join('');
}

/**
 * Pretty JSON reads best; past a few levels its indentation outgrows the data (2,000 levels: 10 KB
 * became 8 MB).
 */
const PRETTY_DEPTH = 16;
const structuredText = (value: unknown) =>
  depthOf(value, PRETTY_DEPTH) < PRETTY_DEPTH ? JSON.stringify(value, null, 2) : compactJson(value);

/** Structured content that only wraps the text beside it (server-filesystem's `{content}`). */
function wrapsText(structured: unknown, text: string): boolean {
  return text.length > 0 && leaves(structured).every((leaf) => text.includes(leaf));
}

/**
 * What the model reads of an MCP result: text as is, structured content as JSON (unless it only
 * repeats the text, which pages better unescaped), and binary content (images, audio, blobs) only
 * described: base64 in the context is cost with no meaning. The bytes go to the store up to
 * `binaryMaxBytes` each.
 */
export function toOutcome(result: CallToolResult, binaryMaxBytes: number): ToolOutcome {
  const parts: string[] = [];
  const binaries: BinaryPart[] = [];
  const describeBinary = (
    kind: string,
    mimeType: string | undefined,
    data: string,
    uri?: string,
  ): string => {
    const sizeBytes = base64Bytes(data);
    const kept = sizeBytes <= binaryMaxBytes;
    binaries.push({
      kind,
      ...(mimeType ? { mimeType } : {}),
      sizeBytes,
      ...(kept ? { base64: data } : {}),
    });
    return `[${kind}${uri ? ` ${uri}` : ''}: ${mimeType ?? 'unknown type'}, ${sizeBytes} bytes, ${kept ? 'stored' : 'not stored (over TOOL_RESULT_BINARY_MAX_BYTES)'}, not shown]`;
  };
  for (const item of result.content ?? []) {
    switch (item.type) {
      case 'text':
        if (!(result.structuredContent && sameJson(item.text, result.structuredContent)))
          parts.push(item.text);
        break;
      case 'image':
      case 'audio':
        parts.push(describeBinary(item.type, item.mimeType, item.data));
        break;
      case 'resource':
        parts.push(
          'text' in item.resource
            ? `[resource ${item.resource.uri}]\n${item.resource.text}`
            : describeBinary(
                'resource',
                item.resource.mimeType,
                String(item.resource.blob),
                item.resource.uri,
              ),
        );
        break;
      case 'resource_link':
        parts.push(`[resource link ${item.uri}${item.name ? ` (${item.name})` : ''}]`);
        break;
    }
  }
  if (result.structuredContent && !wrapsText(result.structuredContent, parts.join('\n')))
    parts.push(structuredText(result.structuredContent));
  const content =
    parts.join('\n') ||
    (result.isError ? 'The tool reported an error without details.' : '(no output)');
  return {
    ...(result.isError ? errorResult(content) : { content, isError: false }),
    ...(binaries.length ? { binaries } : {}),
  };
}

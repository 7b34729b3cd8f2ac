import type { CallToolResult, Client, PromptMessage } from '@modelcontextprotocol/client';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { errorResult, type ToolOutcome } from '../../core/ports/tools.ts';
import { followingSignal } from '../../signals.ts';
import { withTraceContext } from '../../tracing/propagation.ts';
import { toOutcome } from './result.ts';

/** Which server, and how long a request to it may take. */
interface Server {
  name: string;
  timeoutMs: number;
}

/**
 * The first page of the server's resources; none named when it will not list them (it may still
 * read them).
 */
export async function listedResources(
  client: Client,
  { name }: Server,
  logger: Logger,
): Promise<Array<{ uri: string; name?: string }>> {
  try {
    return (await client.listResources()).resources.map(({ uri, name }) => ({ uri, name }));
  } catch (error) {
    logger.warn(`MCP server "${name}" did not list its resources: ${errorMessage(error)}`);
    return [];
  }
}

/** A prompt's messages as the text of one message; throws when the server cannot give it. */
export async function promptText(
  client: Client,
  { timeoutMs }: Server,
  name: string,
  args: Record<string, string>,
): Promise<string> {
  const { messages } = await client.getPrompt({ name, arguments: args }, { timeout: timeoutMs });
  return messages.map(promptMessageText).join('\n\n');
}

/** A resource by its URI (a resource_link a tool returned, or one the server lists). */
export async function resourceOutcome(
  client: Client,
  { name, timeoutMs }: Server,
  uri: string,
  signal: AbortSignal,
  binaryMaxBytes: number,
): Promise<ToolOutcome> {
  const request = followingSignal(signal);
  try {
    const { contents } = await client.readResource(withTraceContext({ uri }), {
      signal: request.signal,
      timeout: timeoutMs,
    });
    // Read as a tool's embedded resources are: text as it is, a blob described and stored.
    const result = {
      content: contents.map((resource) => ({ type: 'resource' as const, resource })),
    };
    return toOutcome(result as CallToolResult, binaryMaxBytes);
  } catch (error) {
    return errorResult(`Reading ${uri} from MCP server "${name}" failed: ${errorMessage(error)}`);
  } finally {
    request.release();
  }
}

/** A prompt's message as text: what is not text is named, not shown. */
function promptMessageText({ content }: PromptMessage): string {
  if (content.type === 'text') return content.text;
  if (content.type === 'resource' && 'text' in content.resource) return content.resource.text;
  if (content.type === 'resource_link') return content.uri;
  return `[${content.type}]`;
}

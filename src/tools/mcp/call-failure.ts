import { SdkError, SdkErrorCode, UnauthorizedError } from '@modelcontextprotocol/client';
import { errorMessage } from '../../core/errors.ts';
import { errorResult, type ToolOutcome } from '../../core/ports/tools.ts';
import type { McpServerConfig } from './config/config.ts';
import { loginCommand } from './sign-in/oauth.ts';

/**
 * What the model reads of a call that failed; a person's connection (`personal`) that needs them
 * to sign in throws, for its owner to ask them.
 */
export function failedCall(
  { name, timeoutMs, maxTimeoutMs }: Pick<McpServerConfig, 'name' | 'timeoutMs' | 'maxTimeoutMs'>,
  personal: boolean,
  tool: string,
  error: unknown,
  signal: AbortSignal,
): ToolOutcome {
  // The turn was stopped (a person's Stop, shutdown, a lost lease): the server was told to
  // cancel, but it had the call, so whether it took effect is unknown.
  if (signal.aborted)
    return {
      ...errorResult(`${tool} on MCP server "${name}" was stopped before it finished.`),
      cutShort: true,
    };
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    return errorResult(
      `${tool} on MCP server "${name}" did not finish within ${timeoutMs / 1000} s of its last word (or ${maxTimeoutMs / 1000} s in all) and was cancelled.`,
    );
  }
  // The person is asked to sign in (again, or more widely), by whoever opened the connection.
  if (error instanceof UnauthorizedError && personal) throw error;
  if (error instanceof UnauthorizedError)
    return errorResult(
      `${tool} on MCP server "${name}" needs more access than Spool was given: an operator has to log in again (${loginCommand(name)}).`,
    );
  return errorResult(`${tool} on MCP server "${name}" failed: ${errorMessage(error)}`);
}

import { context, propagation } from '@opentelemetry/api';
import type { FetchLike } from '@modelcontextprotocol/client';

/**
 * The active trace context in W3C form (`traceparent`, `tracestate`), as MCP's `_meta` carries it
 * (SEP-414); none when tracing is off (no propagator is registered) or no span is active.
 */
export function traceContextMeta(): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/**
 * An MCP request's params with the active trace context in `_meta` (SEP-414), as they are when
 * tracing is off. The SDK keeps them on every leg of a multi-round trip (2026-07-28: a call retried
 * with the person's answer carries the same trace).
 */
export function withTraceContext<P extends object>(
  params: P,
): P & { _meta?: Record<string, string> } {
  const meta = traceContextMeta();
  return meta ? { ...params, _meta: meta } : params;
}

/**
 * `fetch` that sends the active trace context as headers (`traceparent`) to an HTTP MCP server.
 * With tracing off the request goes out as it is.
 */
export const traceContextFetch: FetchLike = (url, init) => {
  const meta = traceContextMeta();
  if (!meta) return fetch(url, init);
  const headers = new Headers(init?.headers);
  for (const [name, value] of Object.entries(meta)) headers.set(name, value);
  return fetch(url, { ...init, headers });
};

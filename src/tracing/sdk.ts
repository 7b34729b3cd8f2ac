import { context, diag, DiagLogLevel, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { errorMessage } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { Tracing } from './api.ts';
import { tracedLlm, tracedTools, tracedTurns, type SpanOptions } from './spans.ts';

/**
 * The OpenTelemetry SDK, registered for the process: spans batched to the OTLP/HTTP endpoint the
 * OTEL_EXPORTER_OTLP_* variables name, the active span kept across awaits (AsyncLocalStorage), and
 * W3C trace context for what Spool calls. Loaded only when tracing is on.
 */
export function sdkTracing(options: SpanOptions, logger: Logger): Tracing {
  // The SDK's own troubles (a receiver that cannot be reached) are warnings, never Spool's failures.
  const warn = (message: string) => logger.warn(`Tracing: ${message}`);
  diag.setLogger(
    { error: warn, warn, info: () => {}, debug: () => {}, verbose: () => {} },
    DiagLogLevel.WARN,
  );
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the default name.
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'spool' }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new TracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('spool');
  return {
    turns: (runner) => tracedTurns(tracer, runner, options),
    llm: (llm, endpoint) => tracedLlm(tracer, llm, endpoint, options),
    tools: (tools) => tracedTools(tracer, tools, options),
    // Spans still batched are sent before the process exits, within the exporter's timeout
    // (OTEL_EXPORTER_OTLP_TIMEOUT, 10 s).
    shutdown: () =>
      provider
        .shutdown()
        .catch((error: unknown) => warn(`the last spans were not sent: ${errorMessage(error)}`)),
  };
}

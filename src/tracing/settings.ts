import type { SettingsReader } from '../core/ports/settings.ts';

/** Tracing's section: OpenTelemetry's own variable names, so an operator's usual setup applies. */
export interface TracingSettings {
  /**
   * OTEL_EXPORTER_OTLP_ENDPOINT: an OTLP/HTTP receiver; tracing is off without it. The exporter
   * reads it (and the other OTEL_EXPORTER_OTLP_* variables) itself; here it only turns tracing on.
   */
  endpoint?: string;
  /**
   * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: message text, tool arguments and results
   * go into spans (secrets masked). Off by default: spans carry names, ids, tokens and timings.
   */
  captureContent: boolean;
}

export function tracingSettings(r: SettingsReader): TracingSettings {
  return {
    endpoint: r.url('OTEL_EXPORTER_OTLP_ENDPOINT'),
    captureContent: r.flag('OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', false),
  };
}

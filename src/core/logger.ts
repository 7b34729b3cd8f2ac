export type LogFields = Record<string, unknown>;

export interface Logger {
  /** Message and request bodies: what users and tools said. Off unless LOG_LEVEL=trace. */
  trace(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

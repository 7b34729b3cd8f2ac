export type LogFields = Record<string, unknown>;

export interface Logger {
  /** Message and request bodies: what users and tools said. Off unless LOG_LEVEL=trace. */
  trace(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /**
   * Runs `fn` with `fields` on every line logged while it runs, across awaits and by any module
   * (a conversation's id, platform and turn). Loggers that keep no context leave it out.
   */
  withFields?<T>(fields: LogFields, fn: () => T): T;
}

/** `fn`, with `fields` on its log lines where the logger can carry them. */
export function withLogFields<T>(logger: Logger, fields: LogFields, fn: () => T): T {
  return logger.withFields ? logger.withFields(fields, fn) : fn();
}

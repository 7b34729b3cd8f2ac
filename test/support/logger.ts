import type { Logger, LogFields } from '../../src/core/logger.ts';

export const silentLogger: Logger = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** Keeps every line so tests can assert on what was logged. */
export class RecordingLogger implements Logger {
  readonly lines: Array<{ level: string; message: string; fields?: LogFields }> = [];
  trace(message: string, fields?: LogFields) {
    this.lines.push({ level: 'trace', message, fields });
  }
  debug(message: string, fields?: LogFields) {
    this.lines.push({ level: 'debug', message, fields });
  }
  info(message: string, fields?: LogFields) {
    this.lines.push({ level: 'info', message, fields });
  }
  warn(message: string, fields?: LogFields) {
    this.lines.push({ level: 'warn', message, fields });
  }
  error(message: string, fields?: LogFields) {
    this.lines.push({ level: 'error', message, fields });
  }
  /** Messages at info level and above. */
  messages(): string[] {
    return this.lines
      .filter((l) => l.level !== 'debug' && l.level !== 'trace')
      .map((l) => l.message);
  }
}

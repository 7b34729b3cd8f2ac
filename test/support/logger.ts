import type { Logger, LogFields } from '../../src/core/logger.ts';

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** Keeps every line so tests can assert on what was logged. */
export class RecordingLogger implements Logger {
  readonly lines: Array<{ level: string; message: string; fields?: LogFields }> = [];
  info(message: string, fields?: LogFields) {
    this.lines.push({ level: 'info', message, fields });
  }
  warn(message: string, fields?: LogFields) {
    this.lines.push({ level: 'warn', message, fields });
  }
  error(message: string, fields?: LogFields) {
    this.lines.push({ level: 'error', message, fields });
  }
  messages(): string[] {
    return this.lines.map((l) => l.message);
  }
}

import type { Writable } from 'node:stream';
import type { Logger, LogFields } from './core/logger.ts';
import { secretMasker } from './core/redact.ts';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LEVELS)[number];

/**
 * One line per event on stderr (stdout belongs to the console channel's replies). Every known
 * secret is masked in the final line, whatever field or message it hid in, escaped or not.
 */
export function createLogger(options: { level: LogLevel; secrets: string[]; stream?: Writable }): Logger {
  const stream = options.stream ?? process.stderr;
  const threshold = LEVELS.indexOf(options.level);
  const mask = secretMasker(options.secrets);
  const write = (level: LogLevel, message: string, fields?: LogFields) => {
    if (LEVELS.indexOf(level) < threshold) return;
    let line = `${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${message}`;
    if (fields && Object.keys(fields).length > 0) line += ` ${JSON.stringify(fields)}`;
    stream.write(`${mask(line)}\n`);
  };
  return {
    trace: (message, fields) => write('trace', message, fields),
    debug: (message, fields) => write('debug', message, fields),
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  };
}

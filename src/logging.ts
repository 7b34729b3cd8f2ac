import { AsyncLocalStorage } from 'node:async_hooks';
import type { Writable } from 'node:stream';
import type { AgentHooks, StepEvent } from './core/agent/hooks.ts';
import type { Logger, LogFields } from './core/logger.ts';
import { secretMasker } from './core/redact.ts';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LEVELS)[number];
export type LogFormat = 'pretty' | 'json';

/**
 * One line per event on stderr (stdout belongs to the console channel's replies): `pretty` for
 * people, `json` (one object a line) for log pipelines. Each line carries the fields of the
 * context it was logged in (see `Logger.withFields`), and every known secret is masked in the
 * final line, whatever field or message it hid in, escaped or not.
 */
export function createLogger(options: {
  level: LogLevel;
  secrets: string[];
  format?: LogFormat;
  stream?: Writable;
}): Logger {
  const stream = options.stream ?? process.stderr;
  const threshold = LEVELS.indexOf(options.level);
  const mask = secretMasker(options.secrets);
  const context = new AsyncLocalStorage<LogFields>();
  const write = (level: LogLevel, message: string, fields?: LogFields) => {
    if (LEVELS.indexOf(level) < threshold) return;
    const all = { ...context.getStore(), ...fields };
    const time = new Date().toISOString();
    let line: string;
    // The line's own keys come first and win over a field of the same name.
    const own = { time, level, msg: message };
    if (options.format === 'json') line = JSON.stringify(Object.assign({ ...own }, all, own));
    else
      line = `${time} ${level.toUpperCase().padEnd(5)} ${message}${Object.keys(all).length > 0 ? ` ${JSON.stringify(all)}` : ''}`;
    stream.write(`${mask(line)}\n`);
  };
  return {
    trace: (message, fields) => write('trace', message, fields),
    debug: (message, fields) => write('debug', message, fields),
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
    withFields: (fields, fn) => context.run({ ...context.getStore(), ...fields }, fn),
  };
}

/** Steps worth a line of their own: a reply cut off at the output limit. */
const STEP_NOTES: Partial<
  Record<StepEvent['action'], { level: 'info' | 'warn'; message: string }>
> = {
  continue: {
    level: 'info',
    message: 'The reply was cut off at the output limit; asking for the rest',
  },
  retry_larger: {
    level: 'warn',
    message: 'The reply was cut off before any text; asking once more with a larger output budget',
  },
  stop: { level: 'warn', message: 'The turn ended without a whole answer' },
};

/** The agent's step and turn events as log lines: what each model call cost and what it did. */
export function logAgentEvents(logger: Logger): AgentHooks {
  return {
    onStepFinish: ({ conversation: _, level: overflowLevel, ...step }) => {
      logger.debug('Step finished', { ...step, overflowLevel });
      const note = STEP_NOTES[step.action];
      if (note) logger[note.level](note.message, { step: step.step });
    },
    onTurnFinish: ({ conversation: _, ...turn }) => logger.info('Turn finished', turn),
    onToolProgress: ({ conversation: _, progress, ...call }) =>
      logger.debug('Tool progress', { ...call, ...progress }),
  };
}

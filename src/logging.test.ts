import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logging.ts';

function capture(level: 'trace' | 'debug' | 'info', secrets: string[]) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ level, secrets, stream }), lines };
}

describe('createLogger', () => {
  it('masks a secret holding quotes and backslashes, as is, inside a field, and inside JSON inside a field', () => {
    const secret = 'sk-"quoted"\\back\\slash';
    const { logger, lines } = capture('info', [secret]);
    logger.info(`plain ${secret}`, { field: secret, nested: JSON.stringify({ key: secret }) });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('quoted');
    expect(lines[0]!.match(/\[redacted\]/g)).toHaveLength(3);
  });

  it('writes trace lines (bodies) only at trace level', () => {
    const atDebug = capture('debug', []);
    atDebug.logger.trace('body: the user wrote this');
    atDebug.logger.debug('a debug line');
    expect(atDebug.lines.map((l) => l.includes('body'))).toEqual([false]);
    const atTrace = capture('trace', []);
    atTrace.logger.trace('body: the user wrote this');
    expect(atTrace.lines[0]).toContain('TRACE body: the user wrote this');
  });
});

describe('log context and formats', () => {
  it('puts the fields of the context a line was logged in on every line, across awaits, nested', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write: (chunk, _e, done) => void (lines.push(String(chunk)), done()),
    });
    const logger = createLogger({ level: 'info', secrets: [], format: 'json', stream });
    await logger.withFields!({ platform: 'slack', conversation: 'c-1' }, async () => {
      logger.info('outer');
      await new Promise((resolve) => setImmediate(resolve));
      await logger.withFields!({ turn: 3 }, async () => logger.warn('inner', { tool: 'x' }));
    });
    logger.info('outside');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(
      parsed.map(({ time, ...rest }) => (expect(Date.parse(time as string)).not.toBeNaN(), rest)),
    ).toEqual([
      { level: 'info', msg: 'outer', platform: 'slack', conversation: 'c-1' },
      { level: 'warn', msg: 'inner', platform: 'slack', conversation: 'c-1', turn: 3, tool: 'x' },
      { level: 'info', msg: 'outside' },
    ]);
  });
});

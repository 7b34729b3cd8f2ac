import { describe, expect, it } from 'vitest';
import { typedCommand } from './typed-command.ts';
import { usageArguments } from './usage-report.ts';

describe('typedCommand', () => {
  it('reads a verb and its words', () => {
    expect(typedCommand(' recall  deploy logs ')).toEqual({ verb: 'recall', query: 'deploy logs' });
    expect(typedCommand('result call_1')).toEqual({ verb: 'result', toolCallId: 'call_1' });
    expect(typedCommand('prompt git review x=1')).toEqual({
      verb: 'prompt',
      command: 'git review x=1',
    });
    expect(typedCommand('usage')).toEqual({ verb: 'usage', chart: false });
    expect(typedCommand('logins')).toEqual({ verb: 'logins' });
    expect(typedCommand('login notes')).toEqual({ verb: 'login', server: 'notes' });
    expect(typedCommand('login')).toEqual({ verb: 'help' });
    expect(typedCommand('logout notes <@U1>')).toEqual({ verb: 'logout', command: 'notes <@U1>' });
    expect(typedCommand('usage chart')).toEqual({ verb: 'usage', chart: true });
  });

  it('takes a prompt with no words as the request for the list', () => {
    expect(typedCommand('prompt')).toEqual({ verb: 'prompt', command: '' });
  });

  it('answers with help for nothing, an unknown verb, or a verb without what it needs', () => {
    for (const text of ['', '   ', 'help', 'hello there', 'recall', 'result '])
      expect(typedCommand(text)).toEqual({ verb: 'help' });
  });

  it('says in one line what /spool usage did not understand, and what it takes', () => {
    expect(typedCommand('usage  Chart ')).toEqual({ verb: 'usage', chart: true });
    expect(typedCommand('usage last month')).toEqual({
      verb: 'usage',
      chart: false,
      problem:
        'I did not understand "last month": `/spool usage` takes nothing, or `chart` (the last 30 days as a chart).',
    });
    expect(typedCommand('usage chart please')).toMatchObject({
      problem: expect.stringMatching(/^I did not understand "please": /),
    });
  });
});

describe('usageArguments', () => {
  it('names what a platform takes: the console takes nothing', () => {
    expect(usageArguments('', { command: '/usage', accepted: [] })).toEqual({ chart: false });
    expect(usageArguments('chart', { command: '/usage', accepted: [] })).toEqual({
      problem: 'I did not understand "chart": `/usage` takes nothing.',
    });
  });

  it('names a word said twice, and the words it does not take, as the person wrote them', () => {
    const slack = { command: '/spool usage', accepted: ['chart'] } as const;
    expect(usageArguments('chart chart', slack)).toEqual({
      problem: 'I did not understand "chart" again: `/spool usage` takes each word once.',
    });
    expect(usageArguments('Chart chart', slack)).toEqual({
      problem: 'I did not understand "chart" again: `/spool usage` takes each word once.',
    });
    expect(usageArguments('chart Daily', slack)).toEqual({
      problem:
        'I did not understand "Daily": `/spool usage` takes nothing, or `chart` (the last 30 days as a chart).',
    });
    expect(usageArguments(' Chart ', slack)).toEqual({ chart: true });
  });
});

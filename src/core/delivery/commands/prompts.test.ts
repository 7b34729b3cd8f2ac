import { describe, expect, it } from 'vitest';
import type { PromptSpec } from '../../ports/prompts.ts';
import { parsePromptCommand, promptList, promptProblem } from './prompts.ts';

const review: PromptSpec = {
  server: 'github',
  name: 'review_pr',
  description: 'Review a pull request',
  arguments: [
    { name: 'pr', required: true },
    { name: 'focus', required: false },
  ],
};

describe('parsePromptCommand', () => {
  it('reads a server, a prompt and arguments, quoted or not', () => {
    expect(
      parsePromptCommand(`github review_pr pr=12 focus="error handling" note='two words' x=`),
    ).toEqual({
      server: 'github',
      name: 'review_pr',
      args: { pr: '12', focus: 'error handling', note: 'two words', x: '' },
    });
  });

  it('says what is wrong with a command it cannot read', () => {
    expect(parsePromptCommand('github')).toEqual({
      problem: 'Name a server and one of its prompts.',
    });
    expect(parsePromptCommand('github review_pr 12 now')).toEqual({
      problem: 'Write a prompt\'s arguments as name=value (not "12 now").',
    });
  });
});

describe('promptProblem', () => {
  it('names an unknown prompt with the ones on offer, and unknown or missing arguments with the usage', () => {
    expect(promptProblem({ server: 'github', name: 'nope', args: {} }, [review])).toBe(
      'There is no prompt `github nope`.\nPrompts:\n• `github review_pr pr=… [focus=…]`: Review a pull request',
    );
    expect(
      promptProblem({ server: 'github', name: 'review_pr', args: { colour: 'red' } }, [review]),
    ).toBe(
      '`github review_pr`: it takes no colour; it needs pr. Usage: `github review_pr pr=… [focus=…]`',
    );
    expect(
      promptProblem({ server: 'github', name: 'review_pr', args: { pr: '1' } }, [review]),
    ).toBeUndefined();
  });

  it('says so when no server offers prompts', () => {
    expect(promptList([])).toBe('No tool server offers prompts here.');
  });
});

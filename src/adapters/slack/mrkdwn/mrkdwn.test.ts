import fc from 'fast-check';
import slackifyMarkdown from 'slackify-markdown';
import { describe, expect, it } from 'vitest';
import { toMrkdwn } from './mrkdwn.ts';

/** Markdown of the shapes a model writes, references and their definitions among them. */
const markdown = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.constantFrom(
        '**bold**',
        '_it_',
        '~~gone~~',
        '`code`',
        '\n\n```ts\nconst x = 1 < 2;\n```\n\n',
        '\n- item\n- item\n',
        '\n1. one\n2. two\n',
        '\n# Title\n',
        '\n> quoted\n',
        '\n| a | b |\n|---|---|\n| 1 | 2 |\n',
        '[a link](https://example.com)',
        '![an image](https://example.com/i.png)',
        '[ref]',
        '[text][ref]',
        '\n\n[ref]: https://example.com/ref "Title"\n\n',
        'https://example.com/bare',
        '<@U123> & <#C1> <b>',
        '\n',
      ),
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''));

/** What a conversion gives: its text, or the error it throws (slackify-markdown throws on some URLs). */
function outcome(convert: (text: string) => string, text: string): string {
  try {
    return convert(text);
  } catch (error) {
    return `threw ${String(error)}`;
  }
}

describe('toMrkdwn', () => {
  it('converts as slackify-markdown does, text after text', () => {
    fc.assert(
      fc.property(fc.array(markdown, { minLength: 1, maxLength: 4 }), (texts) => {
        for (const text of texts)
          expect(outcome(toMrkdwn, text)).toBe(outcome(slackifyMarkdown, text));
      }),
      { numRuns: 300 },
    );
  }, 60_000);

  it("resolves a reference by its own text's definition only", () => {
    expect(toMrkdwn('[docs]\n\n[docs]: https://example.com/docs')).toBe(
      '<https://example.com/docs|docs>\n',
    );
    expect(toMrkdwn('[docs]')).toBe(slackifyMarkdown('[docs]'));
  });
});

import { describe, expect, it } from 'vitest';
import { replyAsFile } from './reply-file.ts';

describe('replyAsFile', () => {
  it('posts a long reply as Markdown, named for its inbox row, with a message saying what it is', () => {
    const reply = `# Report\n\n${'a finding\n'.repeat(1_000)}`;
    expect(replyAsFile(reply, '42')).toEqual({
      text: 'The reply is 10,010 characters long, so here it is as a file, reply-42.md.',
      file: { name: 'reply-42.md', content: reply, language: 'markdown' },
    });
  });

  it('keeps a code-only reply as its code, in its language', () => {
    const code = 'print("hi")\n'.repeat(3).trimEnd();
    expect(replyAsFile(`\`\`\`python\n${code}\n\`\`\``, '7').file).toEqual({
      name: 'reply-7.py',
      content: code,
      language: 'python',
    });
    expect(replyAsFile(`\`\`\`\n${code}\n\`\`\`\n`, '7').file).toEqual({
      name: 'reply-7.txt',
      content: code,
    });
    expect(replyAsFile(`\`\`\`cobol\n${code}\n\`\`\``, '7').file).toMatchObject({
      name: 'reply-7.txt',
      language: 'cobol',
    });
  });

  it('treats text around a code block, or two blocks, as Markdown', () => {
    expect(replyAsFile('Here:\n```js\nx()\n```', '1').file!.name).toBe('reply-1.md');
    expect(replyAsFile('```js\nx()\n```\n\n```js\ny()\n```', '1').file!.name).toBe('reply-1.md');
  });
});

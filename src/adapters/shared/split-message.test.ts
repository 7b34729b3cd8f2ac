import { describe, expect, it } from 'vitest';
import { splitMessage } from './split-message.ts';

const fences = (chunk: string) => chunk.split('\n').filter((l) => /^\s*(```|~~~)/.test(l)).length;
const contentLines = (text: string) =>
  text.split('\n').filter((l) => l.trim() !== '' && !/^\s*(```|~~~)/.test(l));

function randomMarkdown(seed: number): string {
  let s = seed;
  const rand = () => (s = (s * 48271) % 2147483647) / 2147483647;
  const parts: string[] = [];
  for (let i = 0; i < 40; i++) {
    if (rand() < 0.3) {
      const body = Array.from(
        { length: 1 + Math.floor(rand() * 40) },
        (_, j) => `  code line ${i}.${j} ${'x'.repeat(Math.floor(rand() * 60))}`,
      );
      parts.push(['```ts', ...body, '```'].join('\n'));
    } else {
      parts.push(
        Array.from(
          { length: 1 + Math.floor(rand() * 5) },
          (_, j) => `Paragraph ${i} sentence ${j} ${'word '.repeat(Math.floor(rand() * 30))}`,
        ).join('\n'),
      );
    }
  }
  return parts.join('\n\n');
}

describe('splitMessage', () => {
  it('returns short text as one message', () => {
    expect(splitMessage('hello', 2000)).toEqual(['hello']);
  });

  it('prefers paragraph breaks', () => {
    const text = `${'a'.repeat(60)}\n\n${'b'.repeat(30)}\n${'c'.repeat(30)}`;
    expect(splitMessage(text, 100)).toEqual([
      'a'.repeat(60),
      `${'b'.repeat(30)}\n${'c'.repeat(30)}`,
    ]);
  });

  it('closes and reopens a code block it has to split, keeping the language', () => {
    const code = ['```python', ...Array.from({ length: 30 }, (_, i) => `print(${i})`), '```'].join(
      '\n',
    );
    const chunks = splitMessage(`Intro\n\n${code}\n\nOutro`, 120);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(120);
      expect(fences(chunk) % 2).toBe(0);
    }
    expect(chunks.filter((c) => c.includes('print(')).every((c) => c.startsWith('```python'))).toBe(
      true,
    );
  });

  it('cuts a single very long line without losing characters', () => {
    const line = 'word '.repeat(1000).trim();
    const chunks = splitMessage(line, 500);
    expect(chunks.every((c) => c.length <= 500)).toBe(true);
    expect(chunks.join(' ')).toBe(line);
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])(
    'keeps order, limits and balanced fences on random markdown (seed %i)',
    (seed) => {
      const text = randomMarkdown(seed);
      for (const limit of [2000, 3500]) {
        const chunks = splitMessage(text, limit);
        for (const chunk of chunks) {
          expect(chunk.length).toBeLessThanOrEqual(limit);
          expect(fences(chunk) % 2).toBe(0);
        }
        expect(contentLines(chunks.join('\n'))).toEqual(contentLines(text));
      }
    },
  );
});

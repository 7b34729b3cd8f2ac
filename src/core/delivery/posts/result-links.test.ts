import { describe, expect, it } from 'vitest';
import { MOST_RESULT_LINKS, resultLinks, WHOLE_RESULT } from './result-links.ts';

const page = (toolCallId: string) => `https://spool.test/web/results/${toolCallId}`;

describe('resultLinks', () => {
  it('links one previewed result as "View the whole result", at its page by its id alone', () => {
    expect(resultLinks([{ toolCallId: 'call_a', toolName: 'listing' }], page)).toEqual([
      { label: 'View the whole result', url: 'https://spool.test/web/results/call_a' },
    ]);
  });

  it('links the first few of many, each saying which of how many and its tool', () => {
    const previewed = Array.from({ length: 7 }, (_, i) => ({
      toolCallId: `call_${i}`,
      toolName: `tool_${i}`,
    }));
    const links = resultLinks(previewed, page);
    expect(links).toHaveLength(MOST_RESULT_LINKS);
    expect(links).toEqual([
      { label: `${WHOLE_RESULT} 1 of 7: tool_0`, url: page('call_0') },
      { label: `${WHOLE_RESULT} 2 of 7: tool_1`, url: page('call_1') },
      { label: `${WHOLE_RESULT} 3 of 7: tool_2`, url: page('call_2') },
    ]);
  });

  it("cuts a long tool name to a button's 75 characters", () => {
    const previewed = [
      { toolCallId: 'call_a', toolName: `server__${'x'.repeat(60)}` },
      { toolCallId: 'call_b', toolName: 'short' },
    ];
    const [long, short] = resultLinks(previewed, page);
    expect(long!.label).toHaveLength(75);
    expect(long!.label.endsWith('…')).toBe(true);
    expect(short!.label).toBe(`${WHOLE_RESULT} 2 of 2: short`);
  });
});

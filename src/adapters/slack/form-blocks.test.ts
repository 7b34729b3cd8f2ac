import { describe, expect, it } from 'vitest';
import { FORM_ACTIONS, formBlocks } from './form-blocks.ts';

describe('formBlocks', () => {
  it('shows a page to open as a link button, "Open <host>", whose click is the answer, and no inputs', () => {
    const request = { from: 'srv', message: 'Sign in', fields: [], url: 'https://a.example.com/p' };
    const blocks = formBlocks('text', { questionId: 'q1', request });
    expect(blocks.map((b) => b.type)).toEqual(['section', 'actions']);
    const [open, ...rest] = (blocks[1] as { elements: Array<Record<string, unknown>> }).elements;
    expect(open).toMatchObject({
      text: { text: 'Open a.example.com' },
      url: 'https://a.example.com/p',
      action_id: FORM_ACTIONS.accept,
      value: 'q1',
    });
    expect(rest.map((b) => b.action_id)).toEqual([FORM_ACTIONS.decline, FORM_ACTIONS.cancel]);
  });
});

import { ButtonStyle } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { formComponents } from './form-modal.ts';

describe('formComponents', () => {
  it('offers a page to open as a link, "Open <host>", then Done, Decline and Cancel', () => {
    const request = { from: 'srv', message: 'Sign in', fields: [], url: 'https://a.example.com/p' };
    const [row] = formComponents({ questionId: 'q1', request });
    expect(row!.components.map((c) => c.label)).toEqual([
      'Open a.example.com',
      'Done',
      'Decline',
      'Cancel',
    ]);
    expect(row!.components[0]).toMatchObject({
      style: ButtonStyle.Link,
      url: 'https://a.example.com/p',
    });
    expect(row!.components[1]).toMatchObject({ custom_id: expect.stringContaining('q1') });
  });

  it('offers a form as Answer, Decline and Cancel', () => {
    const request = { from: 'srv', message: 'Who?', fields: [] };
    const [row] = formComponents({ questionId: 'q1', request });
    expect(row!.components.map((c) => c.label)).toEqual(['Answer', 'Decline', 'Cancel']);
  });
});

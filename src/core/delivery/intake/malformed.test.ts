import { describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../ports/platform/delivery.ts';
import { problemsOf } from './malformed.ts';

const good: InboundMessage = {
  lane: { platform: 'slack', workspace: 'T1', channel: 'C1', thread: '1.1' },
  messageKey: 'C1:1.1',
  kind: 'message',
  user: 'U1',
  text: 'hi',
  delivery: { ts: '1.1' },
  files: [{ name: 'a.txt', sizeBytes: 3, id: 'F1' }],
};

describe('problemsOf', () => {
  it('finds none in a storable message, even one with no words', () => {
    expect(problemsOf(good)).toEqual([]);
    expect(problemsOf({ ...good, text: '' })).toEqual([]);
  });

  it('names every bad field at once', () => {
    const bad = {
      ...good,
      lane: { platform: 'slack', workspace: undefined, channel: '', thread: 7 },
      user: undefined,
      text: { rich: true },
      delivery: { ts: 1 },
      files: [{ name: 3 }],
    };
    expect(problemsOf(bad as unknown as InboundMessage)).toEqual([
      'no workspace',
      'no channel',
      'no thread',
      'no user',
      'text is object, not text',
      'delivery details are not text',
      'a file has no name or size',
    ]);
    expect(problemsOf({ ...good, lane: undefined } as unknown as InboundMessage)).toContain(
      'no platform',
    );
  });
});

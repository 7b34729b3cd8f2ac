import { describe, expect, it } from 'vitest';
import { leaveOutMovedPast } from './moved-past.ts';
import type { Message } from './types.ts';

const page = (n: number) => `page ${n} `.repeat(500);
const read = (id: string, offset: number): Message => ({
  role: 'assistant',
  content: '',
  toolCalls: [{ id, name: 'get_continuation', arguments: JSON.stringify({ tool_call_id: 'big', offset }), derived: true }],
  turn: 1,
});

const transcript: Message[] = [
  { role: 'user', content: 'read it', turn: 1 },
  { role: 'assistant', content: '', toolCalls: [{ id: 'big', name: 'dump', arguments: '{}' }], turn: 1 },
  { role: 'tool', toolCallId: 'big', content: 'preview', turn: 1 },
  read('p1', 100),
  { role: 'tool', toolCallId: 'p1', content: page(1), turn: 1 },
  read('p2', 200),
  { role: 'tool', toolCallId: 'p2', content: page(2), turn: 1 },
];

describe('leaveOutMovedPast', () => {
  it('keeps the newest step whole and leaves out derived output of earlier steps, naming the call that shows it again', () => {
    const out = leaveOutMovedPast(transcript);
    expect(out[2]).toBe(transcript[2]); // a real tool's result is microcompaction's business
    expect(out[4]).toEqual({
      role: 'tool',
      toolCallId: 'p1',
      content: `[${page(1).length} chars of get_continuation output, read in an earlier step, left out here; call get_continuation with {"tool_call_id":"big","offset":100} to see them again]`,
      turn: 1,
    });
    expect(out[6]).toBe(transcript[6]);
  });

  it('is byte-stable: an output once left out is left out the same way on every later request', () => {
    const before = JSON.stringify(leaveOutMovedPast(transcript).slice(0, 5));
    const later = [...transcript, read('p3', 300), { role: 'tool', toolCallId: 'p3', content: page(3), turn: 1 } as Message, { role: 'assistant', content: 'done', turn: 1 } as Message];
    const after = leaveOutMovedPast(later);
    expect(JSON.stringify(after.slice(0, 5))).toBe(before);
    expect(after[6]!.content).toMatch(/^\[\d+ chars of get_continuation output, read in an earlier step/);
    // A final answer is not a step: the newest page is still the newest step.
    expect(after[8]).toBe(later[8]);
  });

  it('keeps the cost of reading n pages linear: each page is sent whole in one request only', () => {
    let transcriptSoFar = transcript.slice(0, 3);
    let whole = 0;
    for (let n = 1; n <= 20; n++) {
      transcriptSoFar = [...transcriptSoFar, read(`p${n}`, n * 100), { role: 'tool', toolCallId: `p${n}`, content: page(n), turn: 1 }];
      whole += leaveOutMovedPast(transcriptSoFar).filter((m) => m.role === 'tool' && m.content.startsWith('page')).length;
    }
    expect(whole).toBe(20);
  });

  it('leaves everything alone when no call is derived', () => {
    const plain = transcript.map((m) => (m.role === 'assistant' && m.toolCalls ? { ...m, toolCalls: m.toolCalls.map(({ derived: _, ...c }) => c) } : m));
    expect(leaveOutMovedPast(plain)).toEqual(plain);
  });
});

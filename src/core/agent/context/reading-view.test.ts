import { describe, expect, it } from 'vitest';
import { readContinuationPage } from '../results/continuation.ts';
import { movedPastMarker, pageLeftOutMarker } from '../../markers.ts';
import { buildPreview } from '../results/preview.ts';
import { viewOfReading } from './reading-view.ts';
import type { Message } from '../../ports/conversation.ts';

// 300 numbered lines, 9,000 chars or so: every line can be found, and counted, in a request.
const doc = Array.from(
  { length: 300 },
  (_, i) => `line ${String(i).padStart(3, '0')} ${'·'.repeat(20)}`,
).join('\n');
const lineCount = (messages: Message[], i: number) =>
  messages
    .map((m) => m.content)
    .join('\n')
    .split(`line ${String(i).padStart(3, '0')} `).length - 1;

const start = (turn = 1): Message[] => [
  { role: 'user', content: 'read the doc', turn },
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'big', name: 'dump', arguments: '{}' }],
    turn,
  },
  {
    role: 'tool',
    toolCallId: 'big',
    content: buildPreview(doc, 'big', { headChars: 1_000, tailChars: 500 }),
    turn,
  },
];
let n = 0;
/** The model's get_continuation call and its stored page. */
const read = (offset: number, chars: number, turn = 1, of = doc): Message[] => {
  const id = `p${n++}`;
  return [
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        {
          id,
          name: 'get_continuation',
          arguments: JSON.stringify({ tool_call_id: 'big', offset }),
          derived: true,
        },
      ],
      turn,
    },
    {
      role: 'tool',
      toolCallId: id,
      content: readContinuationPage(of, 'big', offset, chars).content,
      turn,
    },
  ];
};
const headEnd = Number(/offset=(\d+)\)/.exec(start()[2]!.content)![1]);

describe('viewOfReading', () => {
  it('keeps every page of the turn in view, each line once, and says when all of it is in view', () => {
    const transcript = [...start()];
    for (let offset = headEnd; offset < doc.length; offset += 2_000)
      transcript.push(...read(offset, 2_000));
    const out = viewOfReading(transcript, 1, 200_000);
    for (let i = 0; i < 300; i++) expect(lineCount(out, i)).toBe(1);
    expect(out.at(-1)!.content).toMatch(
      new RegExp(`; you have all ${doc.length} chars of it in view\\.\\]$`),
    );
    expect(out[4]!.content).toMatch(
      new RegExp(
        `\\[showing ${headEnd}-${headEnd + 2_000}/${doc.length} chars of "big"; you have 0-${headEnd + 2_000}, \\d+-${doc.length} of ${doc.length} in view \\(\\d+ chars\\)\\. Read on with get_continuation\\(tool_call_id="big", offset=${headEnd + 2_000}\\)`,
      ),
    );
  });

  it('sends an overlapping read only for what it adds, and a repeated one as a note', () => {
    const transcript = [
      ...start(),
      ...read(1_000, 2_000),
      ...read(2_000, 2_000),
      ...read(1_500, 1_000),
    ];
    const out = viewOfReading(transcript, 1, 200_000);
    expect(
      out[6]!.content.startsWith(
        `[2000-3000: in view above]\n${doc.slice(3_000, 4_000)}\n[showing 2000-4000/`,
      ),
    ).toBe(true);
    expect(out[8]!.content).toMatch(/^\[1500-2500: in view above\]\n\[showing 1500-2500\//);
    for (let i = 0; i < 300; i++) expect(lineCount(out, i)).toBeLessThanOrEqual(1);
  });

  it('lets the oldest pages give way over the budget, down to half of it at once, naming the offsets to read them again', () => {
    const transcript = [
      ...start(),
      ...read(1_000, 2_000),
      ...read(3_000, 2_000),
      ...read(5_000, 2_000),
    ];
    const out = viewOfReading(transcript, 1, 4_500);
    expect(out).toHaveLength(7);
    expect(out[4]!.content).toBe(pageLeftOutMarker('big', [[1_000, 5_000]]));
    expect(out[6]!.content.startsWith(doc.slice(5_000, 7_000))).toBe(true);
    expect(out[6]!.content).toMatch(
      /you have 0-\d+, 5000-7000, \d+-\d+ of \d+ in view \(\d+ chars\); 1000-5000 read earlier this turn, left out to fit the budget\. Read on with get_continuation\(tool_call_id="big", offset=7000\)/,
    );
    // The next page appends: what gave way stays given way, so the prefix is kept.
    const next = viewOfReading([...transcript, ...read(7_000, 2_000)], 1, 4_500);
    expect(JSON.stringify(next).startsWith(JSON.stringify(out).slice(0, -1))).toBe(true);
  });

  it('folds the pages of one result that gave way into one line, dropping their calls, so a small window does not fill with them', () => {
    const transcript = [
      ...start(),
      ...read(1_000, 1_000),
      ...read(2_000, 1_000),
      ...read(3_000, 1_000),
      ...read(4_000, 1_000),
    ];
    const out = viewOfReading(transcript, 1, 1_200);
    expect(out.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
    ]);
    expect(out[4]!.content).toBe(pageLeftOutMarker('big', [[1_000, 4_000]]));
    expect(out[6]!.content.startsWith(doc.slice(4_000, 5_000))).toBe(true);
    expect(out[6]!.content).toMatch(
      /1000-4000 read earlier this turn, left out to fit the budget\. Read on with get_continuation\(tool_call_id="big", offset=5000\)/,
    );
  });

  it('never points back at what gave way: read to the end over budget, the marker says what it could not hold', () => {
    const transcript = [...start()];
    for (let offset = headEnd; offset < doc.length; offset += 2_000)
      transcript.push(...read(offset, 2_000));
    const last = viewOfReading(transcript, 1, 4_500).at(-1)!.content;
    expect(last).not.toMatch(/Read on/);
    expect(last).toMatch(
      new RegExp(`; ${headEnd}-\\d+ read earlier this turn, left out to fit the budget\\.\\]$`),
    );
  });

  it('grows only by appending while nothing gives way, so request prefixes stay byte-stable', () => {
    const transcript = [...start()];
    let before = JSON.stringify(viewOfReading(transcript, 1, 200_000));
    for (let offset = headEnd; offset < doc.length; offset += 1_500) {
      transcript.push(...read(offset, 1_500));
      const now = JSON.stringify(viewOfReading(transcript, 1, 200_000));
      expect(now.startsWith(before.slice(0, -1))).toBe(true);
      before = now;
    }
  });

  it('leaves the pages and matches of earlier turns out, as one line each', () => {
    const grep: Message[] = [
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          {
            id: 'g',
            name: 'get_continuation',
            arguments: '{"tool_call_id":"big","offset":0,"pattern":"line 2"}',
            derived: true,
          },
        ],
        turn: 1,
      },
      { role: 'tool', toolCallId: 'g', content: '100 matching lines', turn: 1 },
    ];
    const transcript = [
      ...start(),
      ...read(1_000, 2_000),
      ...grep,
      { role: 'user', content: 'thanks', turn: 2 } as Message,
    ];
    const out = viewOfReading(transcript, 2, 200_000);
    expect(out[4]!.content).toBe(pageLeftOutMarker('big', [[1_000, 3_000]]));
    expect(out[6]!.content).toBe(
      movedPastMarker(
        'get_continuation',
        grep[0]!.role === 'assistant' ? grep[0]!.toolCalls![0]!.arguments : '',
        18,
      ),
    );
  });

  it('cuts a page to a budget smaller than itself, and reads on from where the cut is', () => {
    const out = viewOfReading([...start(), ...read(1_000, 3_000)], 1, 1_200);
    expect(out[4]!.content.startsWith(`${doc.slice(1_000, 2_200)}\n[showing 1000-2200/`)).toBe(
      true,
    );
    expect(out[4]!.content).toMatch(/offset=2200\)/);
  });

  it('cuts matches over the budget at a line break, saying how much was cut', () => {
    const hits = Array.from({ length: 50 }, (_, i) => `@${i}: hit ${i} ${'x'.repeat(60)}`).join(
      '\n',
    );
    const transcript: Message[] = [
      ...start(),
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 's', name: 'search_history', arguments: '{}', derived: true }],
        turn: 1,
      },
      { role: 'tool', toolCallId: 's', content: hits, turn: 1 },
    ];
    const shown = viewOfReading(transcript, 1, 1_000).at(-1)!.content;
    const kept = shown.slice(0, shown.lastIndexOf('\n['));
    expect(hits.startsWith(kept)).toBe(true);
    expect(kept.endsWith('\n')).toBe(true);
    expect(
      shown.endsWith(
        `[${hits.length - kept.length} more chars cut here to fit the model's context window; ask for fewer at a time]`,
      ),
    ).toBe(true);
  });
});

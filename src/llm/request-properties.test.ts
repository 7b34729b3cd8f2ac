/**
 * Property tests over generated transcripts: whatever a transcript holds (dropped, duplicated,
 * reordered and orphaned calls and results, repeated and empty ids, bad tool names, lone
 * surrogates, NUL), the request Spool builds from it is one the API accepts, keeps every user
 * and assistant text, and repairing it again changes nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateChatRequest, type ChatRequest } from '../../test/support/fake-openai.ts';
import { buildRequestMessages } from '../core/agent/context/request.ts';
import { countRepairs, repairToolPairing } from '../core/agent/context/pairing.ts';
import type { Message } from '../core/ports/conversation.ts';
import { wellFormed } from '../core/well-formed.ts';
import { chatRequestBody } from './openai-client.ts';

const RUNS = 10_000;
const compaction = {
  minChars: 3_000,
  horizonTurns: 20,
  headChars: 2_000,
  tailChars: 500,
};

// Stored pages and previews, which the reading view parses, overlapping one another.
const PAGE = (start: number, end: number) =>
  `${'p'.repeat(end - start)}\n[showing ${start}-${end}/9000 chars of "a"${end < 9_000 ? `. Read on with get_continuation(tool_call_id="a", offset=${end}), or give it a pattern to find lines anywhere in the result.` : ': the end of it.'}]`;
const PREVIEW =
  '[truncated — showing 3000/9000 chars. Read on with get_continuation(tool_call_id="a", offset=2000), or give it a pattern to find lines anywhere in the result.]';
// Text with the hostile parts mixed in: lone surrogates, NUL, emoji, and the odd long run.
const text = fc
  .array(
    fc.oneof(
      fc.string({ unit: 'binary', maxLength: 20 }),
      fc.constantFrom(
        '\ud800',
        '\udc00',
        '\u0000',
        '😀',
        'x'.repeat(4_000),
        PAGE(0, 3_000),
        PAGE(2_500, 9_000),
        PREVIEW,
      ),
    ),
    { maxLength: 4 },
  )
  .map((parts) => parts.join(''));
// A few ids, so that calls and results repeat, collide and go missing; one of them empty.
const id = fc.constantFrom('a', 'b', 'c', 'call_1', '');
const name = fc.constantFrom(
  'fs__read',
  'get_continuation',
  'functions.read file',
  '',
  'x'.repeat(80),
);
const turn = fc.integer({ min: 1, max: 6 });
const message: fc.Arbitrary<Message> = fc.oneof(
  fc.record({ role: fc.constant('user' as const), content: text, turn }),
  fc.record({ role: fc.constant('assistant' as const), content: text, turn }),
  fc.record({
    role: fc.constant('assistant' as const),
    content: text,
    turn,
    toolCalls: fc.array(
      fc.record({ id, name, arguments: fc.oneof(fc.constant('{}'), text), derived: fc.boolean() }),
      { minLength: 1, maxLength: 4 },
    ),
  }),
  fc.record({ role: fc.constant('tool' as const), toolCallId: id, content: text, turn }),
);
const transcript = fc
  .array(message, { minLength: 1, maxLength: 14 })
  .map((messages) => [{ role: 'user', content: 'start', turn: 1 } as Message, ...messages]);

/** What goes over the wire: the client's own body, serialised and parsed as the server would. */
function sent(messages: Message[]): ChatRequest {
  const body = chatRequestBody(
    { model: 'm', maxTokens: 100 },
    { system: 'system', messages, tools: [], toolChoice: 'auto' },
  );
  return JSON.parse(JSON.stringify(body)) as ChatRequest;
}

describe(`requests built from ${RUNS} generated transcripts`, () => {
  it('are accepted by the strict validator, keep every user and assistant text, and are already repaired', () => {
    fc.assert(
      fc.property(
        transcript,
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1_000, max: 20_000 }),
        (history, currentTurn, viewChars) => {
          const { messages } = buildRequestMessages(history, currentTurn, {
            compaction,
            viewChars,
          });
          expect(validateChatRequest(sent(messages))).toBeUndefined();
          // Every non-empty user and assistant text, in order (well-formed, and never compacted).
          const texts = (ms: Message[]) =>
            ms
              .filter((m) => m.role !== 'tool' && m.content !== '')
              .map((m) => wellFormed(m.content));
          expect(texts(messages)).toEqual(texts(history));
          const again = repairToolPairing(messages);
          expect(again).toEqual(messages);
          expect(countRepairs(messages, again)).toBe(0);
        },
      ),
      { numRuns: RUNS },
    );
    // 10,000 runs take 3 to 6 s on a shared machine: a run, not a timing.
  }, 60_000);
});

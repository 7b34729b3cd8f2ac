import type { Message } from './ports/conversation.ts';

/** What the API (invalid Unicode) or PostgreSQL (0x00 in text, `\u0000` in jsonb) refuses. */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const ILL_FORMED = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\u0000/g;

/**
 * Text that the model's API and the database both accept: a lone surrogate or a NUL becomes
 * U+FFFD. One code unit for one, so every offset into the text stays what it was.
 */
export function wellFormed(text: string): string {
  return text.replace(ILL_FORMED, '\ufffd');
}

/**
 * Forms already checked, per message object: a transcript's messages are the same objects on every
 * request.
 */
const checked = new WeakMap<Message, Message>();

/**
 * `wellFormed` over everything in a message that is stored or sent: its text and its tool calls'
 * arguments.
 */
export function wellFormedMessage(m: Message): Message {
  let out = checked.get(m);
  if (out) return out;
  const content = wellFormed(m.content);
  out =
    m.role === 'assistant' && m.toolCalls
      ? {
          ...m,
          content,
          toolCalls: m.toolCalls.map((c) => ({ ...c, arguments: wellFormed(c.arguments) })),
        }
      : { ...m, content };
  checked.set(m, out);
  // What the agent stores is this output: the request builder then finds it checked already.
  checked.set(out, out);
  return out;
}

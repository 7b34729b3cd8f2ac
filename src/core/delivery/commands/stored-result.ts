import type { StoredResult } from '../../ports/history.ts';
import type { ReplyFile, ReplyLink, ReplyPart } from '../../ports/platform/delivery.ts';

/**
 * A stored result as a message and the file that holds it, with the link to its page where it has
 * one, for `/spool result` and its kin; only the message when there is none.
 */
export function resultAsFile(
  toolCallId: string,
  result: (StoredResult & { link?: ReplyLink }) | undefined,
): ReplyPart {
  if (!result)
    return {
      text: `No tool run with tool_call_id "${toolCallId}" in this channel. Recall shows the ids.`,
    };
  const name = `${toolCallId.replace(/[^\w.-]/g, '_')}.txt`;
  return {
    text: `The full result of ${result.toolName} (${toolCallId}): ${result.content.length.toLocaleString('en-US')} characters.`,
    file: { name, content: result.content },
    ...(result.link ? { links: [result.link] } : {}),
  };
}

/**
 * A result whose file the platform refused, as at most `maxMessages` messages of `render`: the
 * start of it, a line saying why, and how much is left out (the whole result stays stored).
 */
export function resultAsMessages(
  part: ReplyPart & { file: ReplyFile },
  reason: string,
  render: (text: string) => string[],
  maxMessages = 10,
): string[] {
  const why = `_(I could not send it as a file (${reason}), so here it is as messages.)_`;
  const all = render(part.file.content);
  const shown = all.slice(0, maxMessages);
  const shownChars = shown.reduce((sum, text) => sum + text.length, 0);
  const left = part.file.content.length - shownChars;
  const rest =
    all.length > shown.length
      ? ` The rest, about ${left.toLocaleString('en-US')} characters, is left out here; the whole result stays stored.`
      : '';
  return [`${part.text} ${why}${rest}`, ...shown];
}

import type { ReactedMessage } from '../../core/delivery/intake/reactions.ts';
import { splitMessage } from '../shared/split-message.ts';

export const DISCORD_MESSAGE_LIMIT = 2_000;

/** Text as Discord's messages, each within its limit. */
export const discordChunks = (text: string): string[] => splitMessage(text, DISCORD_MESSAGE_LIMIT);

/** Nobody is ever pinged by a reply: not @everyone, not @here, not a role, not a user. */
export const NO_MENTIONS = { parse: [] as never[] };

export const DISCORD_REFUSAL = "Sorry, you can't use Spool here.";

/** The deferred response while Spool works: its status, marked as one. */
const WORKING_MARK = '⏳ Spool is ';
export const workingLine = (status: string) => `${WORKING_MARK}${status}…`;
export const isWorkingLine = (content: unknown) =>
  typeof content === 'string' && content.startsWith(WORKING_MARK);

export const DISCORD_HELP = [
  '**Spool** answers with the help of its tools.',
  '• `/ask prompt:<text>`: ask; later `/ask` calls in this channel or thread continue the conversation.',
  '• `/usage`: what you spent here today, this week and this month (everything, for an admin), with a chart; only you see it.',
  '• `/recall query:<text>`: earlier tool runs and messages in this channel that match (only you see them).',
  '• `/result id:<tool_call_id>`: the whole result of a tool run /recall found, as a file only you see.',
  '• `/prompt server:<server> name:<prompt> arguments:<name=value …>`: ask with a prompt a tool server offers (a wrong name lists them).',
  '• `/new`: start a fresh conversation here; the old one stays searchable.',
  "• `/logins`: the tool servers you are signed in to as yourself (everyone's, for an admin); `/logout server:<server>` ends yours (an admin adds `person:`).",
].join('\n');

/** A message's quote where Discord gave Spool none of it (no Message Content intent). */
export const UNREAD_WORDS =
  "(Discord does not show Spool this message's words: it reads only messages that mention it, " +
  'its own and its DMs, unless its Message Content intent is on. Ask the person to mention Spool ' +
  'with the words instead.)';

/**
 * What Spool can read of another message (one reacted to): its words and the names of its files.
 * Without the Message Content intent Discord gives them only for a message that mentions Spool, one
 * of Spool's own and a DM; another is quoted as a note that says so.
 */
export function readableMessage(
  message: { author: { id: string }; content?: string; attachments?: Array<{ filename: string }> },
  messageContent: boolean,
): ReactedMessage {
  const files = (message.attachments ?? []).map((file) => `[${file.filename}]`);
  const text = [message.content, ...files].filter(Boolean).join('\n');
  return { author: message.author.id, text: text || (messageContent ? '' : UNREAD_WORDS) };
}

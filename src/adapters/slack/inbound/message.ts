/**
 * What a Slack message event says, read defensively: any field may be missing or of another type
 * (Slack adds fields and subtypes, and a request can be hand-made).
 */

/** A message event's fields as Slack sends them; nothing is trusted to be there. */
export type SlackEvent = Record<string, unknown>;

/**
 * Which subtypes are someone talking to Spool. Anything else — edits, deletions, joins and other
 * channel events, bot posts, and any subtype Slack adds later — is not answered.
 */
export const ANSWERED_SUBTYPES: ReadonlySet<string> = new Set([
  'file_share',
  'thread_broadcast',
  'me_message',
]);

/** Slackbot's user id: its DMs and reminders are never someone talking to Spool. */
export const SLACKBOT = 'USLACKBOT';

/**
 * The user ids Slack itself writes as: Slackbot, and `USLACK`, the author of the notices Slack puts
 * in a DM ("<@U1> archived the channel <#C1>"). Neither is ever someone talking to Spool.
 */
const SLACK_ITSELF: ReadonlySet<unknown> = new Set([SLACKBOT, 'USLACK']);

/**
 * Who sent a message: a person, an app (a bot, a workflow, an integration) that only a channel's
 * policy lets Spool answer, or nobody Spool ever answers (itself, Slackbot).
 */
export type Sender = 'person' | 'app' | 'never';

const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const list = (value: unknown): SlackEvent[] =>
  Array.isArray(value)
    ? value.filter((v): v is SlackEvent => typeof v === 'object' && v !== null)
    : [];

export function senderOf(event: SlackEvent, botUserId: string, botId?: string): Sender {
  if (
    SLACK_ITSELF.has(event.user) ||
    (botUserId !== '' && event.user === botUserId) ||
    (botId !== undefined && event.bot_id === botId)
  )
    return 'never';
  if (event.bot_id || event.bot_profile || event.app_id || event.subtype === 'bot_message')
    return 'app';
  return 'person';
}

/** `&amp;`, `&lt;` and `&gt;`: the three characters Slack escapes in a message's text. */
const decodeEntities = (escaped: string) =>
  escaped.replace(/&(amp|lt|gt);/g, (_, name: string) =>
    name === 'lt' ? '<' : name === 'gt' ? '>' : '&',
  );

/** Slack's special mentions, as people write them. */
const BROADCASTS: Record<string, string> = {
  here: '@here',
  channel: '@channel',
  everyone: '@everyone',
};

/** One `<…>` of Slack's markup (without its brackets) as readable words. */
function markup(inner: string): string {
  const bar = inner.indexOf('|');
  const [target, label] = bar < 0 ? [inner, ''] : [inner.slice(0, bar), inner.slice(bar + 1)];
  const plain = decodeEntities(label);
  // A person stays an id the model can mention back; their name, when Slack gives it, beside it.
  if (target.startsWith('@')) return plain ? `@${plain} (<${target}>)` : `<${target}>`;
  if (target.startsWith('#')) return plain ? `#${plain}` : `<${target}>`;
  if (target.startsWith('!')) {
    const [command = ''] = target.slice(1).split('^');
    if (BROADCASTS[command]) return BROADCASTS[command];
    if (command === 'subteam')
      return plain ? (plain.startsWith('@') ? plain : `@${plain}`) : `<${target}>`;
    return plain || `<${target}>`;
  }
  // A link: its label and where it goes; an address written out once.
  const url = decodeEntities(target);
  const shown = url.replace(/^mailto:/, '');
  return plain && plain !== shown && plain !== url ? `${plain} (${url})` : plain || url;
}

/**
 * A message's `text` as Slack writes it (its "formatting": `&amp; &lt; &gt;` escaped, mentions,
 * channels, special mentions, user groups and links in `<…>`) as the plain words a person reads:
 * `<@U1|ann>` is `@ann (<@U1>)`, `<#C1|general>` `#general`, `<!here>` `@here`,
 * `<https://a.example|docs>` `docs (https://a.example)`, and `-&gt; bool` is `-> bool`.
 */
export function slackText(escaped: string): string {
  // Brackets only ever open markup: a typed `<` arrives as `&lt;`, decoded after.
  return escaped
    .split(/(<[^<>]*>)/)
    .map((part, i) => (i % 2 ? markup(part.slice(1, -1)) : decodeEntities(part)))
    .join('');
}

/** One rich_text element, inline or block, as the text Slack's own `text` field would carry. */
function richText(element: SlackEvent): string {
  switch (element.type) {
    case 'text':
      return text(element.text);
    case 'link':
      return element.text ? `${text(element.text)} (${text(element.url)})` : text(element.url);
    case 'user':
      return `<@${text(element.user_id)}>`;
    case 'usergroup':
      return `<!subteam^${text(element.usergroup_id)}>`;
    case 'channel':
      return `<#${text(element.channel_id)}>`;
    case 'emoji':
      return `:${text(element.name)}:`;
    case 'broadcast':
      return `@${text(element.range)}`;
    case 'date':
      return text(element.fallback) || text(element.timestamp);
    case 'rich_text_section':
      return list(element.elements).map(richText).join('');
    case 'rich_text_preformatted':
      return `\`\`\`\n${list(element.elements).map(richText).join('')}\n\`\`\``;
    case 'rich_text_quote':
      return list(element.elements)
        .map(richText)
        .join('')
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n');
    case 'rich_text_list': {
      const indent = '  '.repeat(typeof element.indent === 'number' ? element.indent : 0);
      const offset = typeof element.offset === 'number' ? element.offset : 0;
      const items = list(element.elements).map(richText);
      return items
        .map(
          (item, i) =>
            `${indent}${element.style === 'ordered' ? `${offset + i + 1}.` : '•'} ${item}`,
        )
        .join('\n');
    }
    default:
      return text(element.text);
  }
}

/** A table cell: plain text, or rich text. */
const cellWords = (cell: SlackEvent): string =>
  (cell.type === 'rich_text' ? list(cell.elements).map(richText).join('') : text(cell.text))
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|');

/** A table block (a pasted table) as rows of cells, one line a row, cells between bars. */
const tableWords = (block: SlackEvent): string =>
  list(block.rows)
    .map((row) => `| ${(Array.isArray(row) ? list(row) : []).map(cellWords).join(' | ')} |`)
    .join('\n');

/**
 * The words of a message's rich_text blocks (what a client sends when `text` is empty), and of its
 * tables.
 */
function blockWords(blocks: unknown): string {
  return list(blocks)
    .map((block) =>
      block.type === 'rich_text'
        ? list(block.elements).map(richText).join('\n')
        : block.type === 'table'
          ? tableWords(block)
          : '',
    )
    .filter(Boolean)
    .join('\n')
    .trim();
}

/**
 * An attachment that is part of what the person sent, not a link's preview: a forwarded, shared or
 * unfurled message, or blocks of its own (a pasted table).
 */
const isAttached = (attachment: SlackEvent): boolean =>
  Boolean(
    attachment.is_share ||
    attachment.is_msg_unfurl ||
    attachment.message_blocks ||
    blockWords(attachment.blocks),
  );

/** A forwarded or shared message carries its original: the snapshot's author, place and words. */
function attachmentWords(attachment: SlackEvent): string {
  const snapshot = list(attachment.message_blocks)
    .map((m) => blockWords((m.message as SlackEvent | undefined)?.blocks))
    .join('\n');
  const words =
    snapshot ||
    blockWords(attachment.blocks) ||
    slackText(text(attachment.text) || text(attachment.fallback) || text(attachment.title));
  if (!words) return '';
  const author = text(attachment.author_id)
    ? `<@${text(attachment.author_id)}>`
    : text(attachment.author_name) || text(attachment.author_subname);
  const place = text(attachment.channel_id)
    ? ` in <#${text(attachment.channel_id)}>`
    : text(attachment.channel_name)
      ? ` in #${text(attachment.channel_name)}`
      : '';
  const from = author || place ? ` from ${author || 'someone'}${place}` : '';
  const kind =
    attachment.is_share || attachment.message_blocks || attachment.is_msg_unfurl
      ? 'Forwarded message'
      : 'Attachment';
  const link = text(attachment.from_url) ? ` (${text(attachment.from_url)})` : '';
  return `${kind}${from}${link}:\n${words
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n')}`;
}

/**
 * The words of a message: its `text`, or its rich_text blocks when `text` is empty; then what it
 * forwards, shares or attaches (a pasted table), each marked as attached. Other attachments (link
 * previews) only when there is nothing else. Never invented: a message with no words reads as ''.
 */
export function wordsOf(event: SlackEvent, botUserId: string): string {
  // Spool's own mention, with or without the name Slack may put beside it, is not part of the words.
  const id = botUserId.replace(/[^\w]/g, '');
  const strip = (words: string) =>
    id ? words.replace(new RegExp(`<@${id}(\\|[^>]*)?>`, 'g'), '') : words;
  const written = text(event.text);
  const own = (written ? slackText(strip(written)) : strip(blockWords(event.blocks))).trim();
  const attachments = list(event.attachments);
  const shared = attachments.filter(isAttached).map(attachmentWords).filter(Boolean);
  const parts = [own, ...shared].filter(Boolean);
  if (parts.length === 0) parts.push(...attachments.map(attachmentWords).filter(Boolean));
  return parts.join('\n\n');
}

/** A file as Slack lists it in a message event. */
export interface SlackFile {
  id?: string;
  name?: string;
  title?: string;
  mimetype?: string;
  size?: number;
  url_private_download?: string;
  url_private?: string;
  /**
   * `check_file_info` in Slack Connect channels: the event names the file, files.info says the
   * rest.
   */
  file_access?: string;
}

/**
 * A message's files, whatever the event carries: a file without a URL keeps its id, to be looked
 * up.
 */
export function filesOf(event: SlackEvent): SlackFile[] {
  return list(event.files).filter(
    (f) =>
      typeof f.id === 'string' ||
      typeof f.url_private === 'string' ||
      typeof f.url_private_download === 'string',
  ) as SlackFile[];
}

/**
 * How a message reaches Spool: from whom, and whether only a thread Spool takes part in takes it.
 */
export interface Addressed {
  sender: 'person' | 'app';
  /**
   * A reply in a channel thread without a mention: only for a thread Spool already takes part in.
   */
  knownLaneOnly: boolean;
}

/**
 * Whether a message event is someone talking to Spool: a person (or an app, for the channel's
 * policy to decide on), with a subtype that is a message, in a DM, as a mention, or as a reply in
 * a channel thread. The reason it is not, otherwise.
 */
export function addressedToSpool(
  event: SlackEvent,
  botUserId: string,
  botId?: string,
): Addressed | { ignored: string } {
  const subtype = typeof event.subtype === 'string' ? event.subtype : undefined;
  const sender = senderOf(event, botUserId, botId);
  if (sender === 'never') return { ignored: 'sent by Spool itself or Slackbot' };
  if (subtype && !ANSWERED_SUBTYPES.has(subtype) && subtype !== 'bot_message')
    return { ignored: `subtype ${subtype}` };
  const mentioned =
    event.type === 'app_mention' ||
    (botUserId !== '' && text(event.text).includes(`<@${botUserId}>`));
  const direct = event.channel_type === 'im';
  // In a channel, a top-level message is for Spool only with a mention.
  if (!direct && !mentioned && typeof event.thread_ts !== 'string')
    return { ignored: 'a channel message without a mention' };
  return { sender, knownLaneOnly: !direct && !mentioned };
}

/** A person's edit (`text`) or deletion (none) of a message, keyed as Slack keys the message. */
export interface SlackEdit {
  messageKey: string;
  user: string;
  text?: string;
  /** The edit itself: Slack's `edited.ts`, so every delivery of one edit is one message. */
  editKey: string;
}

/** An edit's `edited` stamp, as Slack sets it on the edited message. */
type Edited = { user?: string; ts?: string } | undefined;

/**
 * An edit or a deletion as Slack reports it (`message_changed`, `message_deleted`, and a mention
 * edited, which Slack sends again as `app_mention` with the same `ts` and an `edited` stamp). Slack
 * reports other changes the same way (an unfurl added, a reply broadcast, words unchanged): those
 * are not a person's edit, and give none.
 */
export function editOf(event: SlackEvent, botUserId: string): SlackEdit | undefined {
  const previous = event.previous_message as SlackEvent | undefined;
  if (event.subtype === 'message_deleted') return deletionOf(event, previous);
  if (event.type === 'app_mention' && event.edited)
    return editedTo(event, event, event.edited as Edited, botUserId);
  if (event.subtype !== 'message_changed') return undefined;
  const message = event.message as SlackEvent | undefined;
  if (!message) return undefined;
  const edit = editedTo(
    event,
    { ts: previous?.ts, ...message },
    message.edited as Edited,
    botUserId,
  );
  if (edit && previous && wordsOf(previous, botUserId) === edit.text) return undefined;
  return edit;
}

/** The edit that made `message` (in `event`'s channel) read as it does now. */
function editedTo(
  event: SlackEvent,
  message: SlackEvent,
  edited: Edited,
  botUserId: string,
): SlackEdit | undefined {
  const user = edited?.user ?? message.user;
  if (!edited?.ts || typeof message.ts !== 'string' || typeof user !== 'string') return undefined;
  const messageKey = `${String(event.channel)}:${message.ts}`;
  const text = wordsOf(message, botUserId);
  return { messageKey, user, text, editKey: `${messageKey}:edited:${edited.ts}` };
}

function deletionOf(event: SlackEvent, previous: SlackEvent | undefined): SlackEdit | undefined {
  const ts = event.deleted_ts ?? previous?.ts;
  if (typeof ts !== 'string' || typeof previous?.user !== 'string') return undefined;
  const messageKey = `${String(event.channel)}:${ts}`;
  return { messageKey, user: previous.user, editKey: `${messageKey}:deleted` };
}

import type { Context, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { InboundFile } from '../../../core/ports/platform/delivery.ts';
import { keyIn, workspaceOf, type SlackParts } from '../parts.ts';
import { viewedSubject } from './subject.ts';
import {
  addressedToSpool,
  editOf,
  filesOf,
  wordsOf,
  type SlackEvent,
  type SlackFile,
} from './message.ts';

/** A file as the inbox keeps it; one Slack lists without a URL is looked up by its id when read. */
const inboundFile = (f: SlackFile): InboundFile => ({
  name: f.name ?? f.title ?? `file ${f.id ?? ''}`.trim(),
  ...(f.mimetype ? { mimeType: f.mimetype } : {}),
  sizeBytes: typeof f.size === 'number' ? f.size : 0,
  ...((f.url_private_download ?? f.url_private)
    ? { url: f.url_private_download ?? f.url_private }
    : {}),
  ...(f.id ? { id: f.id } : {}),
});

/** Inbound: mentions and messages become the delivery engine's messages (and edits). */
export function listenForMessages(parts: SlackParts): void {
  parts.app.event('app_mention', ({ event, body, context }) =>
    receive(parts, event as unknown as SlackEvent, body, context),
  );
  parts.app.message(({ message, body, context }) =>
    receive(parts, message as unknown as SlackEvent, body, context),
  );
}

/**
 * A message event or a mention, if it is someone talking to Spool: a person (or an app the
 * channel's policy lets in), with a subtype that is a message (`ANSWERED_SUBTYPES`), in a DM, a
 * mention, or a reply in a thread Spool takes part in. A mention arrives both as app_mention and
 * as a message event: the two are one inbox row.
 */
async function receive(
  { clients, config, delivery, logger }: SlackParts,
  event: SlackEvent,
  body: SlackEventMiddlewareArgs['body'],
  context: Context,
): Promise<void> {
  const { botUserId = '', botId } = context;
  const workspace = workspaceOf(context, body.team_id);
  const edit = editOf(event, botUserId);
  if (edit) {
    const channel = String(event.channel);
    const lane = { platform: 'slack', workspace, channel, thread: '' };
    const outcome = await delivery.editIncoming({
      lane,
      ...edit,
      messageKey: keyIn(config, workspace, edit.messageKey),
      editKey: keyIn(config, workspace, edit.editKey),
    });
    return logger.debug('Slack: an edit', { outcome });
  }
  const addressed = addressedToSpool(event, botUserId, botId);
  if ('ignored' in addressed)
    return logger.debug('Slack: not a message to answer', {
      type: String(event.type),
      why: addressed.ignored,
    });
  const files = filesOf(event).map(inboundFile);
  const fromApp = addressed.sender === 'app';
  const user = (fromApp ? (event.bot_id ?? event.app_id) : event.user) as string;
  // In the agent view, "summarize this" is about the channel message the person has open.
  const subject = fromApp
    ? undefined
    : await viewedSubject(await clients.of(workspace), event, user);
  await delivery.handleIncoming({
    lane: {
      platform: 'slack',
      workspace,
      channel: event.channel as string,
      thread: (event.thread_ts ?? event.ts) as string,
    },
    // The message, not the delivery: app_mention and message events of one message are one row.
    messageKey: keyIn(config, workspace, `${String(event.channel)}:${String(event.ts)}`),
    kind: 'message',
    user,
    ...(fromApp ? { fromApp } : {}),
    // A text of another type is passed on as it is, for the delivery engine to name as malformed.
    text:
      event.text === undefined || typeof event.text === 'string'
        ? [wordsOf(event, botUserId), subject].filter(Boolean).join('\n\n')
        : (event.text as string),
    delivery: { ts: event.ts as string },
    knownLaneOnly: addressed.knownLaneOnly,
    ...(files.length ? { files } : {}),
  });
}

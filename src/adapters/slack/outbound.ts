import type { WebClient } from '@slack/web-api';
import type { InboundMessage } from '../../core/ports/platform/delivery.ts';
import type { OutgoingChunk, Outbound } from '../../core/ports/platform/platform.ts';
import { policyFor, type Policy } from '../../core/delivery/rules/policy.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { approvalBlocks } from './approval-blocks.ts';
import { answerBlocks } from './feedback.ts';
import { deleteFile, fetchSlackFile, uploadFile } from './files.ts';
import { formBlocks } from './form-blocks.ts';
import { linkButtons, linkLines } from './link-buttons.ts';
import { slackText } from './inbound/message.ts';
import type { SlackParts } from './parts.ts';
import { startThread, tell } from './schedules.ts';
import { SlackStatus } from './status.ts';
import { SLACK_REFUSAL, toSlackMessages } from './text.ts';

const HISTORY_MESSAGES = 50;
/**
 * Message metadata on every reply chunk, so a resumed delivery can find what a crash left
 * unrecorded.
 */
const REPLY_EVENT = 'spool_reply';

/**
 * Outbound, what Slack does for the delivery engine: replies posted in the thread (a long one as a
 * file), prompts with buttons, edits, the private refusal, the working status, the files people
 * shared, and what a thread said before Spool was mentioned into it.
 */
export function slackOutbound({ clients, config, logger }: SlackParts): Outbound {
  const status = new SlackStatus(clients, config.statusRetryMs ?? 600_000);
  // Each call with the token of the message's own workspace.
  const clientOf = ({ lane }: Pick<InboundMessage, 'lane'>) => clients.of(lane.workspace);
  return {
    render: toSlackMessages,
    postsFiles: true,
    post: async (message, chunk) =>
      post(await clientOf(message), config.policy, message.lane, chunk),
    // The text alone, with no blocks (the buttons go), but for an answer's links, 👍 and 👎.
    edit: async (message, ts, chunk) => {
      const { lane } = message;
      const blocks = replyBlocks(chunk) ?? [];
      const client = await clientOf(message);
      await client.chat.update({ channel: lane.channel, ts, text: chunk.text, blocks });
    },
    removeFile: async (message, fileId) => deleteFile(await clientOf(message), fileId),
    findPosted: async (message, chunk) => findPosted(await clientOf(message), message, chunk),
    startThread: async (message, text) => startThread(await clientOf(message), message, text),
    tell: async ({ workspace, user }, text) => tell(await clients.of(workspace), user, text),
    refuse: async (message) => {
      const { lane, user } = message;
      const client = await clientOf(message);
      await client.chat.postEphemeral({
        channel: lane.channel,
        user,
        thread_ts: lane.thread,
        text: SLACK_REFUSAL,
      });
    },
    // Ephemeral: only the person sees it, in the thread where they asked.
    showPrivately: async (message, text, link) => {
      const { lane, user } = message;
      const client = await clientOf(message);
      await client.chat.postEphemeral({
        channel: lane.channel,
        user,
        thread_ts: lane.thread,
        text: `${text} ${link.url}`,
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }, linkButtons([link])],
      });
    },
    showWorking: (message) => status.showWorking(message),
    showStatus: (message, text) => status.showStatus(message, text),
    // Slack clears assistant.threads.setStatus after two minutes.
    statusLapses: true,
    fetchFile: async (message, file, maxBytes, signal) =>
      fetchSlackFile(await clientOf(message), config, file, maxBytes, signal),
    // An agent-view thread (the app's DM) is named after its first question.
    titleThread: async (message) => {
      const { lane, text } = message;
      if (!lane.channel.startsWith('D')) return;
      const client = await clientOf(message);
      await client.assistant.threads
        .setTitle({ channel_id: lane.channel, thread_ts: lane.thread, title: threadTitle(text) })
        .catch((error: unknown) =>
          logger.debug('Slack: could not title the thread', { error: errorMessage(error) }),
        );
    },
    // Mentioned into a thread that already has messages: what was said before, so it has the
    // context.
    threadContext: async (message) =>
      message.lane.thread === message.delivery.ts
        ? undefined
        : threadHistory(await clientOf(message), logger, message),
  };
}

/** An answer's message with its links and, the last, its 👍 and 👎; none for a plain one. */
function replyBlocks(chunk: OutgoingChunk) {
  const inboxId = chunk.feedback ? chunk.inboxId : undefined;
  if (!inboxId && !chunk.links?.length) return undefined;
  return answerBlocks(chunk.text, inboxId, chunk.links);
}

/** A thread's title: the question's first line, cut at a word near 60 characters. */
const TITLE_CHARS = 60;
function threadTitle(question: string): string {
  const line =
    question
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? 'New chat';
  if (line.length <= TITLE_CHARS) return line;
  const cut = line.slice(0, TITLE_CHARS);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 20 ? cut.lastIndexOf(' ') : TITLE_CHARS)}…`;
}

/** One chunk of a reply as a message in the thread (or a file, with its text). */
async function post(
  client: WebClient,
  policy: Policy | undefined,
  lane: InboundMessage['lane'],
  chunk: OutgoingChunk,
): Promise<string> {
  if (chunk.file) return uploadFile(client, lane, linkLines(chunk.text, chunk.links), chunk.file);
  const metadata = chunk.inboxId
    ? { event_type: REPLY_EVENT, event_payload: { inbox: chunk.inboxId, seq: chunk.seq } }
    : undefined;
  const blocks = chunk.approval
    ? approvalBlocks(toSlackMessages(chunk.text)[0]!, chunk.approval)
    : chunk.form
      ? formBlocks(toSlackMessages(chunk.text)[0]!, chunk.form)
      : replyBlocks(chunk);
  // No previews of the links a reply carries, unless the channel's policy allows them.
  const unfurl = policyFor(policy, lane).unfurl === true;
  const sent = await client.chat.postMessage({
    channel: lane.channel,
    thread_ts: lane.thread,
    text: chunk.text,
    unfurl_links: unfurl,
    unfurl_media: unfurl,
    metadata,
    ...(blocks ? { blocks } : {}),
  });
  return sent.ts ?? '';
}

/** A chunk a crashed process posted without recording it: by its metadata, or its file's name. */
async function findPosted(
  client: WebClient,
  { lane, delivery }: InboundMessage,
  chunk: OutgoingChunk & { inboxId: string },
): Promise<string | undefined> {
  const replies = await client.conversations.replies({
    channel: lane.channel,
    ts: lane.thread,
    oldest: delivery.ts,
    include_all_metadata: true,
    limit: 200,
  });
  const payload = (m: {
    metadata?: { event_type?: string; event_payload?: Record<string, unknown> };
  }) => m.metadata?.event_type === REPLY_EVENT && m.metadata.event_payload;
  // An upload carries no metadata: its file's name, unique to the reply, finds it.
  if (chunk.file)
    return replies.messages?.flatMap((m) => m.files ?? []).find((f) => f.name === chunk.file!.name)
      ?.id;
  return replies.messages?.find((m) => {
    const p = payload(m);
    return p && String(p.inbox) === chunk.inboxId && Number(p.seq) === chunk.seq;
  })?.ts;
}

/** The thread's earlier messages, before the new one, for a conversation that starts there. */
async function threadHistory(
  client: WebClient,
  logger: Logger,
  message: InboundMessage,
): Promise<string | undefined> {
  try {
    const replies = await client.conversations.replies({
      channel: message.lane.channel,
      ts: message.lane.thread,
      limit: HISTORY_MESSAGES,
    });
    const earlier = (replies.messages ?? [])
      .filter((m) => m.ts !== message.delivery.ts && m.text)
      .map((m) => `<@${m.user ?? m.bot_id ?? 'unknown'}>: ${slackText(m.text!)}`);
    return earlier.length
      ? `Earlier in this Slack thread:\n${earlier.join('\n')}\n\nNew message from <@${message.user}>:\n${message.text}`
      : undefined;
  } catch (error) {
    logger.warn('Slack: could not read thread history', { error: errorMessage(error) });
    return undefined;
  }
}

import type { WebClient } from '@slack/web-api';
import { ChannelGoneError, type InboundMessage } from '../../core/ports/platform/delivery.ts';
import { errorMessage } from '../../core/errors.ts';
import type { Respond, SlackParts } from './parts.ts';
import { SLACK_REFUSAL, slackChunks } from './text.ts';

/** What Slack answers when Spool may not post in a channel any more. */
const CHANNEL_GONE = ['channel_not_found', 'not_in_channel', 'is_archived', 'channel_is_archived'];

/** A scheduled run's header, as a new message in the channel: its ts is the run's thread. */
export async function startThread(
  client: WebClient,
  { lane }: InboundMessage,
  text: string,
): Promise<string> {
  try {
    const sent = await client.chat.postMessage({
      channel: lane.channel,
      text,
      unfurl_links: false,
      unfurl_media: false,
    });
    return sent.ts!;
  } catch (error) {
    const code = (error as { data?: { error?: string } }).data?.error;
    if (code && CHANNEL_GONE.includes(code)) throw new ChannelGoneError(code);
    throw error;
  }
}

/** A direct message to a person. */
export async function tell(client: WebClient, user: string, text: string): Promise<void> {
  const dm = await client.conversations.open({ users: user });
  await client.chat.postMessage({ channel: dm.channel?.id ?? user, text });
}

/**
 * `/spool schedule …`: a new schedule read in the person's Slack time zone (users.info), the
 * channel's list, or a cancellation; the answer only to them.
 */
export async function scheduleCommand(
  { clients, delivery, logger }: SlackParts,
  lane: InboundMessage['lane'],
  user: string,
  words: string,
  respond: Respond,
): Promise<void> {
  const timeZone = await timeZoneOf(await clients.of(lane.workspace), user).catch(
    (error: unknown) => {
      // Without users:read, SCHEDULE_TIME_ZONE stands in.
      logger.warn('Slack: could not read a person’s time zone', { error: errorMessage(error) });
      return undefined;
    },
  );
  const answer = await delivery.schedule({ lane, user }, words, timeZone);
  for (const chunk of slackChunks(answer ?? SLACK_REFUSAL))
    await respond({ response_type: 'ephemeral', text: chunk });
}

/** The person's time zone as their Slack profile says it (`Europe/Paris`). */
async function timeZoneOf(client: WebClient, user: string): Promise<string | undefined> {
  return (await client.users.info({ user })).user?.tz;
}

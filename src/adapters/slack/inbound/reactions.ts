import { reactionPrompt, reactionRequest } from '../../../core/delivery/intake/reactions.ts';
import type { InboundMessage } from '../../../core/ports/platform/delivery.ts';
import { keyIn, workspaceOf, type SlackParts } from '../parts.ts';
import { messageAt } from './subject.ts';

/** A reaction event, as Slack sends it (reaction_added, reaction_removed). */
interface ReactionEvent {
  user?: string;
  reaction?: string;
  item?: { type?: string; channel?: string; ts?: string };
}

/**
 * Reactions as requests (core/delivery/intake/reactions.ts), from Slack's events: the request is
 * answered in the reacted message's thread; taking the emoji off stops its turn if it still runs.
 */
export function listenForReactions(parts: SlackParts): void {
  parts.app.event('reaction_added', async ({ event, body, context }) => {
    // Spool's own ⏳ (its working sign, where the status API is refused) asks nothing.
    if (event.user === context.botUserId) return;
    const asked = await request(parts, event as ReactionEvent, workspaceOf(context, body.team_id));
    if (!asked) return;
    const handled = await parts.delivery.handleIncoming(asked);
    parts.logger.debug('Slack: a reaction', { outcome: handled.status });
  });
  parts.app.event('reaction_removed', async ({ event, body, context }) => {
    const asked = await request(parts, event as ReactionEvent, workspaceOf(context, body.team_id));
    if (!asked) return;
    const outcome = await parts.delivery.stopTurn(asked, asked.messageKey);
    parts.logger.debug('Slack: a reaction taken back', { outcome });
  });
}

/** The request a reaction makes, or none (an emoji no prompt is mapped to, not on a message). */
async function request(
  { clients, config, logger }: SlackParts,
  { user, reaction, item }: ReactionEvent,
  workspace: string,
): Promise<InboundMessage | undefined> {
  if (!user || !reaction || item?.type !== 'message' || !item.channel || !item.ts) return undefined;
  const { channel, ts } = item;
  // Skin tones are one emoji: `+1::skin-tone-2` asks what `+1` asks.
  const emoji = reaction.split('::')[0]!;
  const prompt = reactionPrompt(config.policy, { platform: 'slack', workspace, channel }, emoji);
  if (!prompt) return undefined;
  const reacted = await messageAt(await clients.of(workspace), channel, ts);
  if (!reacted) {
    logger.warn('Slack: could not read the message a reaction is on', { channel });
    return undefined;
  }
  const lane = { platform: 'slack', workspace, channel, thread: reacted.thread };
  const asked = reactionRequest({ lane, user, emoji, on: `${channel}:${ts}` }, prompt, reacted, {
    ts,
  });
  return { ...asked, messageKey: keyIn(config, workspace, asked.messageKey) };
}

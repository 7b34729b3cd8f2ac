import type { ReplyLink } from '../../core/ports/platform/delivery.ts';
import type { Rating } from '../../core/ports/feedback.ts';
import { feedbackReply } from '../../core/delivery/posts/feedback.ts';
import { splitMessage } from '../shared/split-message.ts';
import { linkButtons } from './link-buttons.ts';
import { workspaceOf, type SlackParts } from './parts.ts';

/** The action ids of an answer's 👍/👎 (value `up:<inbox id>`), and of the 👎's reason prompt. */
export const FEEDBACK_ACTION = 'spool_feedback';
export const REASON_ACTION = 'spool_feedback_reason';
export const SKIP_ACTION = 'spool_feedback_skip';
/** A section block's text is at most this long; an answer's message may be longer. */
const SECTION_CHARS = 3_000;

/**
 * An answer's message as Block Kit: its text, its links (to the whole results its turn previewed),
 * then, under the last (`inboxId`), Slack's feedback buttons (a `context_actions` block), each
 * carrying the answer's inbox row.
 */
export function answerBlocks(
  text: string,
  inboxId: string | undefined,
  links: readonly ReplyLink[] = [],
) {
  const button = (label: string, rating: Rating, accessible: string) => ({
    text: { type: 'plain_text' as const, text: label },
    value: `${rating}:${inboxId}`,
    accessibility_label: accessible,
  });
  return [
    ...splitMessage(text, SECTION_CHARS).map((part) => ({
      type: 'section' as const,
      text: { type: 'mrkdwn' as const, text: part },
    })),
    ...(links.length > 0 ? [linkButtons(links)] : []),
    ...(inboxId
      ? [
          {
            type: 'context_actions' as const,
            elements: [
              {
                type: 'feedback_buttons' as const,
                action_id: FEEDBACK_ACTION,
                positive_button: button('👍', 'up', 'This answer helped'),
                negative_button: button('👎', 'down', 'This answer did not help'),
              },
            ],
          },
        ]
      : []),
  ];
}

/** After a 👎: a private prompt for why (Enter sends it), or Skip. */
function reasonBlocks(inboxId: string) {
  return [
    {
      type: 'input' as const,
      block_id: `${REASON_ACTION}:${inboxId}`,
      dispatch_action: true,
      label: { type: 'plain_text' as const, text: 'Saved. What was wrong? (optional)' },
      element: {
        type: 'plain_text_input' as const,
        action_id: REASON_ACTION,
        max_length: 1_000,
        dispatch_action_config: { trigger_actions_on: ['on_enter_pressed' as const] },
      },
    },
    {
      type: 'actions' as const,
      elements: [
        {
          type: 'button' as const,
          action_id: SKIP_ACTION,
          text: { type: 'plain_text' as const, text: 'Skip' },
          value: inboxId,
        },
      ],
    },
  ];
}

interface FeedbackBody {
  team: { id: string } | null;
  /** An org-wide install's click names its workspace here (`team` is null). */
  user: { id: string; team_id?: string };
  channel?: { id: string };
  container?: { channel_id?: string };
}

/** Where the click was: the answer's channel (a rating is kept per answer, not per thread). */
const whoClicked = (context: { teamId?: string }, body: FeedbackBody) => ({
  lane: {
    platform: 'slack',
    workspace: workspaceOf(context, body.team?.id ?? body.user?.team_id ?? ''),
    channel: body.channel?.id ?? body.container?.channel_id ?? '',
    thread: '',
  },
  user: body.user.id,
});

/**
 * Clicks on an answer's 👍/👎: stored with the answer, once per person (a second click replaces
 * the first). A 👎 is followed by a private prompt for a reason, which may be skipped.
 */
export function listenForFeedback({ app, delivery }: SlackParts): void {
  app.action(
    { type: 'block_actions', action_id: FEEDBACK_ACTION },
    async ({ ack, body, action, respond, context }) => {
      await ack();
      const [rating, inboxId] = String((action as { value?: string }).value ?? '').split(':');
      if ((rating !== 'up' && rating !== 'down') || !inboxId) return;
      const click = { ...whoClicked(context, body as FeedbackBody), inboxId, rating } as const;
      const outcome = await delivery.rateAnswer(click);
      if (outcome === 'recorded' && rating === 'down')
        await respond({
          response_type: 'ephemeral',
          replace_original: false,
          text: feedbackReply(outcome, click),
          blocks: reasonBlocks(inboxId),
        });
      else
        await respond({
          response_type: 'ephemeral',
          replace_original: false,
          text: feedbackReply(outcome, click),
        });
    },
  );

  app.action(
    { type: 'block_actions', action_id: REASON_ACTION },
    async ({ ack, body, action, respond, context }) => {
      await ack();
      const { value, block_id } = action as { value?: string; block_id?: string };
      const inboxId = block_id?.slice(REASON_ACTION.length + 1);
      if (!inboxId || !value?.trim()) return;
      const click = {
        ...whoClicked(context, body as FeedbackBody),
        inboxId,
        rating: 'down' as const,
      };
      const outcome = await delivery.rateAnswer({ ...click, reason: value });
      await respond({
        response_type: 'ephemeral',
        replace_original: true,
        text: feedbackReply(outcome, { ...click, reason: value }),
      });
    },
  );

  app.action({ type: 'block_actions', action_id: SKIP_ACTION }, async ({ ack, respond }) => {
    await ack();
    await respond({ delete_original: true });
  });
}

import { clickReply } from '../../../core/delivery/posts/approval-text.ts';
import { formClickReply } from '../../../core/delivery/waiting/forms.ts';
import { APPROVE_ACTION, DENY_ACTION } from '../approval-blocks.ts';
import { FORM_ACTIONS, formActionOf, formValues } from '../form-blocks.ts';
import { workspaceOf, type SlackParts } from '../parts.ts';

/** The thread a prompt's button was clicked in. */
function laneOfClick(
  context: { teamId?: string },
  body: {
    team: { id: string } | null;
    user?: { team_id?: string };
    channel?: { id: string };
    message?: { ts: string; thread_ts?: string };
  },
) {
  return {
    platform: 'slack',
    workspace: workspaceOf(context, body.team?.id ?? body.user?.team_id ?? ''),
    channel: body.channel?.id ?? '',
    thread: body.message?.thread_ts ?? body.message?.ts ?? '',
  };
}

/**
 * Interactions: the buttons of approval prompts and of questions (block actions), and the agent
 * session's Stop button. A click that changes nothing is answered privately; a prompt is edited by
 * the turn that waits.
 */
export function listenForClicks(parts: SlackParts): void {
  const { app, clients, delivery } = parts;
  app.action(
    { type: 'block_actions', action_id: new RegExp(`^(${APPROVE_ACTION}|${DENY_ACTION})$`) },
    async ({ ack, body, action, respond, context }) => {
      await ack();
      if (action.type !== 'button' || !body.channel) return;
      const outcome = await delivery.decideApproval({
        lane: laneOfClick(context, body),
        user: body.user.id,
        toolCallId: action.value ?? '',
        approve: action.action_id === APPROVE_ACTION,
      });
      const text = clickReply(outcome, 'slack');
      if (text) await respond({ response_type: 'ephemeral', replace_original: false, text });
    },
  );

  app.action(
    {
      type: 'block_actions',
      action_id: new RegExp(`^(${Object.values(FORM_ACTIONS).join('|')})$`),
    },
    async ({ ack, body, action, respond, context }) => {
      await ack();
      if (action.type !== 'button' || !body.channel) return;
      const outcome = await delivery.answerForm({
        lane: laneOfClick(context, body),
        user: body.user.id,
        questionId: action.value ?? '',
        action: formActionOf(action.action_id),
        values: formValues(body.state),
      });
      const text = formClickReply(outcome, 'slack');
      if (text) await respond({ response_type: 'ephemeral', replace_original: false, text });
    },
  );

  // The agent session's Stop button: the thread's turn ends, on whichever replica runs it.
  app.event('agent_session_stopped', async ({ event, body, context }) => {
    const stopped = event as unknown as { channel: string; thread_ts?: string; user?: string };
    const lane = {
      platform: 'slack',
      workspace: workspaceOf(context, body.team_id),
      channel: stopped.channel,
      thread: stopped.thread_ts ?? '',
    };
    const outcome = await delivery.stopTurn({ lane, user: stopped.user ?? '' });
    // Nothing ran: the session is told it is no longer processing (Slack leaves that to the app).
    const client = await clients.of(lane.workspace);
    if (outcome !== 'stopping')
      await client.agents.sessions
        .setStatus({ channel_id: lane.channel, thread_ts: lane.thread, status: 'active' })
        .catch(() => {});
  });
}

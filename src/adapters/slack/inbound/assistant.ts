import { keyIn, workspaceOf, type SlackParts } from '../parts.ts';
import { errorMessage } from '../../../core/errors.ts';

/** `assistant_thread_started` and `assistant_thread_context_changed`, as Slack sends them. */
interface AgentThreadEvent {
  assistant_thread: {
    user_id: string;
    channel_id: string;
    thread_ts: string;
    /** The channel the person is looking at, when they opened the thread or since. */
    context?: { channel_id?: string };
  };
}

/**
 * Slack's agent view (assistant threads): a new thread is greeted (an inbox row of kind
 * `greeting`, answered through the outbox) and gets the prompts of the channel the person looks
 * at; when they look at another channel, its prompts. The delivery engine decides both; where the
 * policy sets no prompts, the app's own (the manifest's) stand.
 */
export function listenForAgentThreads(parts: SlackParts): void {
  parts.app.event('assistant_thread_started', ({ event, body, context }) =>
    agentThread(
      parts,
      event as unknown as AgentThreadEvent,
      workspaceOf(context, body.team_id),
      true,
    ),
  );
  parts.app.event('assistant_thread_context_changed', ({ event, body, context }) =>
    agentThread(
      parts,
      event as unknown as AgentThreadEvent,
      workspaceOf(context, body.team_id),
      false,
    ),
  );
}

async function agentThread(
  { clients, config, delivery, logger }: SlackParts,
  { assistant_thread: thread }: AgentThreadEvent,
  workspace: string,
  started: boolean,
): Promise<void> {
  const lane = {
    platform: 'slack',
    workspace,
    channel: thread.channel_id,
    thread: thread.thread_ts,
  };
  const context = thread.context?.channel_id;
  const prompts = delivery.suggestedPrompts({ lane, user: thread.user_id }, context);
  const client = await clients.of(workspace);
  if (prompts && prompts !== 'refused')
    await client.assistant.threads
      .setSuggestedPrompts({ channel_id: lane.channel, thread_ts: lane.thread, prompts })
      .catch((error: unknown) =>
        logger.warn('Slack: could not set suggested prompts', { error: errorMessage(error) }),
      );
  if (!started) return;
  await delivery.handleIncoming({
    lane,
    // One greeting per thread, however often Slack delivers the event.
    messageKey: keyIn(config, workspace, `${lane.channel}:${lane.thread}:greeting`),
    kind: 'greeting',
    user: thread.user_id,
    text: '',
    delivery: { ts: lane.thread, ...(context ? { context } : {}) },
  });
}

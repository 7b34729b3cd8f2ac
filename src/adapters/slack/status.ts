import type { InboundMessage } from '../../core/ports/platform/delivery.ts';
import type { SlackClients } from './installs/clients.ts';

const THINKING_REACTION = 'hourglass_flowing_sand';

/** A session's title: the first line of the question that opened it, within Slack's 200 chars. */
const sessionTitle = (text: string) =>
  (text.split('\n').find((line) => line.trim()) ?? 'Spool').trim().slice(0, 200);

/**
 * That Spool is working, in a thread: "is thinking…" (`assistant.threads.setStatus`) where Slack
 * supports it, else an ⏳ reaction; then what it is doing; and the thread's agent session.
 */
export class SlackStatus {
  /**
   * assistant.threads.setStatus fails for some apps and workspaces (scopes, plans, outages): after
   * a failure a reaction stands in, and the status API is tried again after a while, never given
   * up.
   */
  private statusApiAfter = 0;
  /** Until when agent sessions are not tried again (the app is not declared as an agent). */
  private sessionsApiAfter = 0;
  /** The messages whose turn opened the thread's agent session, to mark it active at the end. */
  private readonly sessions = new Set<string>();

  /** `retryMs`: after the status API (or sessions) failed, how long until it is tried again. */
  constructor(
    private readonly clients: SlackClients,
    private readonly retryMs: number,
  ) {}

  /** The working indicator; returns its end, which also marks the agent session active. */
  async showWorking(message: InboundMessage): Promise<(replyFollows: boolean) => Promise<void>> {
    const endIndicator = await this.showIndicator(message);
    return async (replyFollows) => {
      await endIndicator(replyFollows);
      await this.closeSession(message);
    };
  }

  /** Where the status API answers; with reactions standing in, the reaction says enough. */
  async showStatus(message: InboundMessage, status: string): Promise<void> {
    await this.openSession(message);
    const { lane } = message;
    if (Date.now() < this.statusApiAfter) return;
    const client = await this.clients.of(lane.workspace);
    await client.assistant.threads.setStatus({
      channel_id: lane.channel,
      thread_ts: lane.thread,
      status: `is ${status}…`,
    });
  }

  /**
   * The thread's agent session, where Slack has Spool as an agent: opened (`processing`, with its
   * Stop button, titled by the first question) once a turn runs long enough to show a status, so a
   * quick turn costs no more calls; `active` when it ends. Where sessions are refused, tried again
   * after `retryMs`.
   */
  private async openSession({ lane, text, messageKey }: InboundMessage) {
    if (this.sessions.has(messageKey) || Date.now() < this.sessionsApiAfter) return;
    try {
      const client = await this.clients.of(lane.workspace);
      await client.agents.sessions.setStatus({
        channel_id: lane.channel,
        thread_ts: lane.thread,
        status: 'processing',
        title: sessionTitle(text),
      });
      this.sessions.add(messageKey);
    } catch {
      this.sessionsApiAfter = Date.now() + this.retryMs;
    }
  }

  private async closeSession({ lane, messageKey }: InboundMessage) {
    if (!this.sessions.delete(messageKey)) return;
    const client = await this.clients.of(lane.workspace);
    await client.agents.sessions
      .setStatus({ channel_id: lane.channel, thread_ts: lane.thread, status: 'active' })
      .catch(() => {});
  }

  /** "is thinking…" in the thread where Slack supports it, else a reaction; returns its end. */
  private async showIndicator({
    lane,
    delivery,
  }: InboundMessage): Promise<(replyFollows: boolean) => Promise<void>> {
    const client = await this.clients.of(lane.workspace);
    if (Date.now() >= this.statusApiAfter) {
      try {
        await client.assistant.threads.setStatus({
          channel_id: lane.channel,
          thread_ts: lane.thread,
          status: 'is thinking…',
        });
        // Slack clears the status when the app replies in the thread: one call per turn, not two.
        return async (replyFollows) => {
          // Best effort: Slack drops a status by itself after two minutes without a message.
          if (replyFollows) return;
          // The workspace's current token: none once it was uninstalled meanwhile.
          const now = await this.clients.of(lane.workspace).catch(() => undefined);
          await now?.assistant.threads
            .setStatus({ channel_id: lane.channel, thread_ts: lane.thread, status: '' })
            .catch(() => {});
        };
      } catch {
        this.statusApiAfter = Date.now() + this.retryMs;
      }
    }
    const reaction = { channel: lane.channel, timestamp: delivery.ts!, name: THINKING_REACTION };
    // Only an indicator: a reaction Slack refuses (already there, no scope) changes nothing that
    // matters.
    await client.reactions.add(reaction).catch(() => {});
    return async () => {
      // As above: an indicator, best effort, with the workspace's current token (if any).
      const now = await this.clients.of(lane.workspace).catch(() => undefined);
      await now?.reactions.remove(reaction).catch(() => {});
    };
  }
}

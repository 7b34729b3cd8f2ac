import { Routes, type REST } from 'discord.js';
import type { InboundMessage } from '../../core/ports/platform/delivery.ts';
import { stopComponents } from './interactions/components.ts';
import { NO_MENTIONS, workingLine } from './text.ts';

/**
 * A scheduled run's status: no interaction asked for the run, so no deferred response shows that
 * Spool works on it. A message of Spool's own in the run's thread does, with Stop, from the turn's
 * start; it says what Spool is doing as the status changes, and goes when the turn ends (the reply
 * follows), as the deferral's working line gives way to an `/ask`'s reply. A Stop on it is a Stop
 * in the run's lane (see interactions.ts).
 */
export class RunStatus {
  /** Each running turn's status message, by message key, while its turn runs on this replica. */
  private readonly posts = new Map<string, Promise<string | undefined>>();

  constructor(private readonly rest: REST) {}

  /** Posts the status; returns its end, which deletes it. An indicator: nothing here throws. */
  async show({ lane, messageKey }: InboundMessage): Promise<() => Promise<void>> {
    const posted = (
      this.rest.post(Routes.channelMessages(lane.thread), {
        body: this.body(messageKey, 'thinking'),
      }) as Promise<{ id: string }>
    ).then(
      (sent) => sent.id,
      () => undefined,
    );
    this.posts.set(messageKey, posted);
    await posted;
    return async () => {
      this.posts.delete(messageKey);
      const id = await posted;
      if (id) await this.rest.delete(Routes.channelMessage(lane.thread, id)).catch(() => {});
    };
  }

  /** What the turn is doing, on its status message; none once the turn ended. */
  async update({ lane, messageKey }: InboundMessage, status: string): Promise<void> {
    const id = await this.posts.get(messageKey);
    if (!id) return;
    await this.rest.patch(Routes.channelMessage(lane.thread, id), {
      body: this.body(messageKey, status),
    });
  }

  private body(messageKey: string, status: string) {
    return {
      content: workingLine(status),
      components: stopComponents(messageKey),
      allowed_mentions: NO_MENTIONS,
    };
  }
}

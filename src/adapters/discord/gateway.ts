import { GatewayDispatchEvents, type Client, type GatewayDispatchPayload } from 'discord.js';
import { errorMessage } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';

/**
 * An INTERACTION_CREATE (or an interaction over HTTP, the same payload) completed with what discord.js reads unconditionally when it builds the
 * interaction, where Discord left it out: `entitlements` and `authorizing_integration_owners`
 * (absent before 2023, as in Discord's own documented example), `application_id` (always this
 * app's), and the `channel` object where only `channel_id` came. Without them the person's
 * message would be lost to a TypeError inside discord.js.
 */
export function completeInteraction(
  d: Record<string, unknown>,
  applicationId: string,
): Record<string, unknown> {
  return {
    ...d,
    application_id: d.application_id ?? applicationId,
    entitlements: d.entitlements ?? [],
    authorizing_integration_owners: d.authorizing_integration_owners ?? {},
    ...(d.channel == null && typeof d.channel_id === 'string'
      ? { channel: { id: d.channel_id } }
      : {}),
  };
}

/**
 * discord.js handles each gateway event inside the socket's message handler, where nothing
 * catches it: an event it cannot handle becomes an unhandled rejection, which ends the process.
 * Every event passes through here instead (its one entry, `handlePacket`): an interaction is
 * completed first, so that a real person's message is answered, and an event that still throws
 * is logged and skipped while the connection carries on.
 */
export function guardGateway(client: Client, applicationId: string, logger: Logger): void {
  const ws = client.ws as unknown as {
    handlePacket(packet?: GatewayDispatchPayload, shard?: unknown): boolean;
  };
  const handle = ws.handlePacket.bind(ws);
  ws.handlePacket = (packet, shard) => {
    try {
      const completed =
        packet?.t === GatewayDispatchEvents.InteractionCreate
          ? {
              ...packet,
              d: completeInteraction(packet.d as unknown as Record<string, unknown>, applicationId),
            }
          : packet;
      return handle(completed as GatewayDispatchPayload | undefined, shard);
    } catch (error) {
      logger.error('Discord: a gateway event could not be handled', {
        event: packet?.t ?? 'none',
        error: errorMessage(error),
      });
      return true;
    }
  };
}

import type { App } from '@slack/bolt';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../core/logger.ts';
import type { Policy } from '../../core/delivery/rules/policy.ts';
import type { Delivery } from '../../core/ports/platform.ts';
import type { SlackSettings } from './settings.ts';

export interface SlackAdapterConfig extends SlackSettings {
  /**
   * After the status API fails, how long reactions stand in before it is tried again (default 10
   * minutes).
   */
  statusRetryMs?: number;
  /** Web API calls and the Socket Mode connection go through this (a proxy). */
  dispatcher?: Dispatcher;
  /** The per-channel policy (POLICY_FILE): where replies may unfurl. */
  policy?: Policy;
}

/**
 * What each part of the adapter works with: the Bolt app (its listeners, its Web API client), the
 * settings, the delivery engine (its commands answered in time or with plain words, see
 * core/delivery/commands/commands.ts), the log.
 */
export interface SlackParts {
  app: App;
  config: SlackAdapterConfig;
  delivery: Delivery;
  logger: Logger;
}

/** An answer only the person who asked sees, through a command's or a click's response_url. */
export type Respond = (message: { response_type: 'ephemeral'; text: string }) => Promise<unknown>;

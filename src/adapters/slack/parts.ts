import type { App, InstallationStore, StateStore } from '@slack/bolt';
import type { Dispatcher } from 'undici';
import type { Logger } from '../../core/logger.ts';
import type { Policy } from '../../core/delivery/rules/policy.ts';
import type { Delivery } from '../../core/ports/platform/platform.ts';
import type { SlackClients, WorkspaceInstallations } from './installs/clients.ts';
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
  /** Installs (`installs` set): where installations and install links' `state` are kept. */
  installationStore?: InstallationStore & WorkspaceInstallations;
  stateStore?: StateStore;
}

/**
 * What each part of the adapter works with: the Bolt app (its listeners), each workspace's Web API
 * client, the settings, the delivery engine (its commands answered in time or with plain words, see
 * core/delivery/commands/commands.ts), the log.
 */
export interface SlackParts {
  app: App;
  clients: SlackClients;
  config: SlackAdapterConfig;
  delivery: Delivery;
  logger: Logger;
}

/**
 * The workspace a request is for: the one whose installation Bolt authorized it with (an event's
 * `authorizations`, so a Slack Connect channel's message is the receiving workspace's, not the
 * sender's), where the payload names one at all; one naming none stays without, for the delivery
 * engine to refuse.
 */
export const workspaceOf = (context: { teamId?: string }, named: string): string =>
  named ? (context.teamId ?? named) : named;

/**
 * A message's key in the inbox. With installs it names the workspace too: two workspaces may share
 * a channel id and a ts (a Slack Connect channel is delivered to each), and the inbox keeps one row
 * per platform and key. With one token, the key is as it always was.
 */
export const keyIn = (
  { installs }: Pick<SlackParts['config'], 'installs'>,
  workspace: string,
  key: string,
): string => (installs ? `${workspace}:${key}` : key);

/** An answer only the person who asked sees, through a command's or a click's response_url. */
export type Respond = (message: { response_type: 'ephemeral'; text: string }) => Promise<unknown>;

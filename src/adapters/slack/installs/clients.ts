import type { App, Installation, InstallationQuery } from '@slack/bolt';
import { WebClient, type WebClientOptions } from '@slack/web-api';

/** The Web API client of each workspace: what Spool posts there goes with that workspace's token. */
export interface SlackClients {
  of(workspace: string): Promise<WebClient>;
}

/** One workspace, one token (SLACK_BOT_TOKEN): Bolt's own client, as ever. */
export const singleWorkspace = (app: App): SlackClients => ({
  of: () => Promise.resolve(app.client),
});

/** Where a workspace's installation is found (the installation store). */
export interface WorkspaceInstallations {
  forWorkspace(workspace: string): Promise<Installation>;
  /** The workspaces an installation serves: an org-wide one, each of its organization's seen. */
  workspacesOf(query: InstallationQuery<boolean>): Promise<string[]>;
}

/**
 * Installed workspaces: each post looks its workspace's installation up (an uninstalled one has
 * none, and nothing is posted; a rotated token is the new one), and keeps one client per token.
 */
export function installedWorkspaces(
  installations: WorkspaceInstallations,
  options: WebClientOptions,
): SlackClients {
  const clients = new Map<string, { token: string; client: WebClient }>();
  return {
    async of(workspace) {
      const token = (await installations.forWorkspace(workspace)).bot?.token;
      if (!token) throw new Error(`Slack workspace ${workspace}'s installation has no bot token`);
      const known = clients.get(workspace);
      if (known?.token === token) return known.client;
      const client = new WebClient(token, options);
      clients.set(workspace, { token, client });
      return client;
    },
  };
}

import type { SettingsReader } from '../../core/ports/settings.ts';

/** Where Slack sends the browser back after "Add to Slack", on Spool's HTTP server. */
export const INSTALL_PATH = '/slack/install';
export const REDIRECT_PATH = '/slack/oauth_redirect';

/** The bot scopes of the README's manifest: what an install asks for unless SLACK_INSTALL_SCOPES says. */
export const DEFAULT_INSTALL_SCOPES = [
  'app_mentions:read',
  'channels:history',
  'groups:history',
  'im:history',
  'mpim:history',
  'chat:write',
  'assistant:write',
  'reactions:write',
  'reactions:read',
  'users:read',
  'files:read',
  'files:write',
  'im:write',
  'commands',
];

/**
 * Any number of workspaces, installed with "Add to Slack" (SLACK_CLIENT_ID and SLACK_CLIENT_SECRET
 * without SLACK_BOT_TOKEN): each workspace's own token, from its installation.
 */
export interface SlackInstallSettings {
  scopes: string[];
  /** PUBLIC_URL + /slack/oauth_redirect: the app's Redirect URL. */
  redirectUrl: string;
  /** Workspace (T…) or organization (E…) ids that may install; any when unset. */
  allowedWorkspaces?: string[];
  /**
   * Org-wide installs an admin approves on Slack's side arrive without `state`: refused unless the
   * operator opts in (SLACK_ADMIN_INSTALLS_WITHOUT_STATE).
   */
  adminInstallsWithoutState: boolean;
}

/** Slack's section; none unless SLACK_BOT_TOKEN, or the app's client id and secret, are set. */
export interface SlackSettings {
  /** One workspace, with this token; none when workspaces install the app (`installs`). */
  botToken?: string;
  installs?: SlackInstallSettings;
  /** Socket Mode; without it, the Events API over HTTP, signed with `signingSecret`. */
  appToken?: string;
  signingSecret?: string;
  apiUrl?: string;
  allowedChannels?: string[];
  allowedUsers?: string[];
  /**
   * The app's client id and secret (Basic Information → App Credentials): installs, and Sign in
   * with Slack, which checks who follows a link to sign in to a tool server as themselves.
   */
  clientId?: string;
  clientSecret?: string;
}

export function slackSettings(r: SettingsReader): SlackSettings | undefined {
  const botToken = r.string('SLACK_BOT_TOKEN');
  const appToken = r.string('SLACK_APP_TOKEN');
  const signingSecret = r.string('SLACK_SIGNING_SECRET');
  const clientId = r.string('SLACK_CLIENT_ID');
  const clientSecret = r.string('SLACK_CLIENT_SECRET');
  if (!clientId !== !clientSecret)
    r.problem(
      'SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set together (installs, Sign in with Slack)',
    );
  // Read whichever way Slack runs, so that every setting is known; used only for installs.
  const installChoices = {
    scopes: r.list('SLACK_INSTALL_SCOPES') ?? DEFAULT_INSTALL_SCOPES,
    allowedWorkspaces: r.list('SLACK_INSTALL_WORKSPACES'),
    adminInstallsWithoutState: r.flag('SLACK_ADMIN_INSTALLS_WITHOUT_STATE', false),
  };
  const installs =
    !botToken && clientId && clientSecret ? installSettings(r, installChoices) : undefined;
  if (!botToken && !installs) {
    if (appToken || signingSecret)
      r.problem(
        'SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (installs) must be set when SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is set',
      );
    return undefined;
  }
  if (!appToken && !signingSecret)
    r.problem(
      'Slack needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (Events API over HTTP)',
    );
  return {
    ...(botToken ? { botToken } : { installs }),
    appToken,
    signingSecret,
    apiUrl: r.url('SLACK_API_URL'),
    allowedChannels: r.list('SLACK_ALLOWED_CHANNELS'),
    allowedUsers: r.list('SLACK_ALLOWED_USERS'),
    ...(clientId && clientSecret ? { clientId, clientSecret } : {}),
  };
}

function installSettings(
  r: SettingsReader,
  choices: Omit<SlackInstallSettings, 'redirectUrl'>,
): SlackInstallSettings | undefined {
  const publicUrl = r.url('PUBLIC_URL');
  if (!publicUrl)
    r.problem(
      'Installs (SLACK_CLIENT_ID without SLACK_BOT_TOKEN) need PUBLIC_URL: Slack sends installers back there',
    );
  // Installations are kept sealed, as MCP tokens are.
  if (!r.string('MCP_OAUTH_KEY'))
    r.problem(
      'Installs (SLACK_CLIENT_ID without SLACK_BOT_TOKEN) need MCP_OAUTH_KEY (openssl rand -base64 32): tokens are kept only encrypted',
    );
  if (!publicUrl) return undefined;
  return { ...choices, redirectUrl: `${publicUrl}${REDIRECT_PATH}` };
}

import type { SettingsReader } from '../../core/ports/settings.ts';

/** Slack's section; none unless SLACK_BOT_TOKEN is set. */
export interface SlackSettings {
  botToken: string;
  /** Socket Mode; without it, the Events API over HTTP, signed with `signingSecret`. */
  appToken?: string;
  signingSecret?: string;
  apiUrl?: string;
  allowedChannels?: string[];
  allowedUsers?: string[];
  /**
   * The app's client id and secret (Basic Information → App Credentials): Sign in with Slack, which
   * checks who follows a link to sign in to a tool server as themselves.
   */
  clientId?: string;
  clientSecret?: string;
}

export function slackSettings(r: SettingsReader): SlackSettings | undefined {
  const botToken = r.string('SLACK_BOT_TOKEN');
  const appToken = r.string('SLACK_APP_TOKEN');
  const signingSecret = r.string('SLACK_SIGNING_SECRET');
  const apiUrl = r.url('SLACK_API_URL');
  const allowedChannels = r.list('SLACK_ALLOWED_CHANNELS');
  const allowedUsers = r.list('SLACK_ALLOWED_USERS');
  const clientId = r.string('SLACK_CLIENT_ID');
  const clientSecret = r.string('SLACK_CLIENT_SECRET');
  if (!clientId !== !clientSecret)
    r.problem('SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set together (Sign in with Slack)');
  if (!botToken) {
    if (appToken || signingSecret)
      r.problem('SLACK_BOT_TOKEN must be set when SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is set');
    return undefined;
  }
  if (!appToken && !signingSecret)
    r.problem(
      'SLACK_BOT_TOKEN needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (Events API over HTTP)',
    );
  return {
    botToken,
    appToken,
    signingSecret,
    apiUrl,
    allowedChannels,
    allowedUsers,
    ...(clientId && clientSecret ? { clientId, clientSecret } : {}),
  };
}

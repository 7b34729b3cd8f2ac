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
}

export function slackSettings(r: SettingsReader): SlackSettings | undefined {
  const botToken = r.string('SLACK_BOT_TOKEN');
  const appToken = r.string('SLACK_APP_TOKEN');
  const signingSecret = r.string('SLACK_SIGNING_SECRET');
  const apiUrl = r.url('SLACK_API_URL');
  const allowedChannels = r.list('SLACK_ALLOWED_CHANNELS');
  const allowedUsers = r.list('SLACK_ALLOWED_USERS');
  if (!botToken) {
    if (appToken || signingSecret)
      r.problem('SLACK_BOT_TOKEN must be set when SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is set');
    return undefined;
  }
  if (!appToken && !signingSecret)
    r.problem(
      'SLACK_BOT_TOKEN needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (Events API over HTTP)',
    );
  return { botToken, appToken, signingSecret, apiUrl, allowedChannels, allowedUsers };
}

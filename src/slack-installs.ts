import type { Dispatcher } from 'undici';
import type { Config } from './config.ts';
import type { Logger } from './core/logger.ts';
import { errorMessage } from './core/errors.ts';
import { refreshBotToken } from './adapters/slack/installs/rotation.ts';
import type { PrismaClient } from './store/generated/client.ts';
import { SlackInstallations } from './store/credentials/slack-installations.ts';
import { SlackInstallStates } from './store/credentials/slack-install-states.ts';
import { fetchThrough } from './proxy.ts';

/**
 * Wiring for Slack installs (SLACK_CLIENT_ID without SLACK_BOT_TOKEN): the installations and the
 * install links' `state` in the database, a rotating token refreshed at Slack. None otherwise.
 */
export function slackInstallStores(
  config: Config,
  prisma: PrismaClient,
  dispatcher: Dispatcher | undefined,
  logger: Logger,
) {
  const { slack } = config;
  const key = config.tools.oauth.key;
  if (!slack?.installs || !slack.clientId || !slack.clientSecret || !key) return {};
  const clientOptions = {
    ...(slack.apiUrl ? { slackApiUrl: `${slack.apiUrl}/` } : {}),
    ...(dispatcher ? { fetch: fetchThrough(dispatcher) } : {}),
  };
  const refresh = refreshBotToken({
    ...slack,
    clientId: slack.clientId,
    clientSecret: slack.clientSecret,
    clientOptions,
  });
  return {
    installationStore: new SlackInstallations(prisma, {
      key,
      refresh,
      onRefreshFailed: (id, error) =>
        logger.warn('Slack: a token refresh failed; the current token goes on until it expires', {
          installation: id,
          error: errorMessage(error),
        }),
    }),
    stateStore: new SlackInstallStates(prisma),
  };
}

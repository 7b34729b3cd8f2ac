import { errorMessage } from '../../core/errors.ts';
import { workspaceOf, type SlackParts } from './parts.ts';

/** A tokens_revoked event: the users (`oauth`) and bot users (`bot`) whose tokens were revoked. */
interface TokensRevoked {
  tokens?: { oauth?: string[]; bot?: string[] };
}

/**
 * Uninstalls: `app_uninstalled`, and `tokens_revoked` naming the bot, delete that installation at
 * once (Bolt authorizes neither event: the tokens are gone already). Nothing of another workspace
 * is touched. With one workspace's token (SLACK_BOT_TOKEN) there is nothing stored to delete: the
 * operator is told.
 */
export function listenForLifecycle({ app, config, logger }: SlackParts): void {
  const uninstalled = async (
    why: string,
    body: { team_id?: string; enterprise_id?: string },
    context: { teamId?: string; enterpriseId?: string; isEnterpriseInstall?: boolean },
  ) => {
    const query = {
      teamId: workspaceOf(context, body.team_id ?? ''),
      enterpriseId: context.enterpriseId ?? body.enterprise_id,
      isEnterpriseInstall: context.isEnterpriseInstall === true,
    };
    const store = config.installationStore;
    if (!store?.deleteInstallation)
      return logger.error(`Slack: ${why}; SLACK_BOT_TOKEN no longer works`, {
        workspace: query.teamId,
      });
    try {
      await store.deleteInstallation(query);
      logger.info(`Slack: ${why}; its installation is deleted`, {
        workspace: query.teamId,
        enterprise: query.enterpriseId ?? '',
      });
    } catch (error) {
      logger.error(`Slack: ${why}, but its installation could not be deleted`, {
        error: errorMessage(error),
      });
      throw error;
    }
  };
  app.event('app_uninstalled', ({ body, context }) =>
    uninstalled('the app was uninstalled', body, context),
  );
  app.event('tokens_revoked', async ({ event, body, context }) => {
    // Only users' tokens: the bot, and the installation, stay.
    if (!(event as TokensRevoked).tokens?.bot?.length) return;
    await uninstalled("the bot's tokens were revoked", body, context);
  });
}

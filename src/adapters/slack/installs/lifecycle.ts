import { errorMessage } from '../../../core/errors.ts';
import { workspaceOf, type SlackParts } from '../parts.ts';

/** A tokens_revoked event: the users (`oauth`) and bot users (`bot`) whose tokens were revoked. */
interface TokensRevoked {
  tokens?: { oauth?: string[]; bot?: string[] };
}

/**
 * Uninstalls: `app_uninstalled`, and `tokens_revoked` naming the bot, end the workspace's open
 * turns with nothing posted, pause its schedules, and delete its installation, at once (Bolt
 * authorizes neither event: the tokens are gone already). An org-wide install's uninstall ends
 * every workspace of its organization. Nothing of another workspace is touched. With one
 * workspace's token (SLACK_BOT_TOKEN) there is nothing stored to delete: the operator is told.
 */
export function listenForLifecycle({ app, config, delivery, logger }: SlackParts): void {
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
    try {
      // The workspaces it served (an org-wide install: each of the organization's seen), read
      // before its token goes, so that nothing more is posted there; then their turns end and
      // their schedules pause.
      const workspaces = store ? await store.workspacesOf(query) : [query.teamId];
      await store?.deleteInstallation?.(query);
      for (const workspace of workspaces)
        await delivery.workspaceGone({ platform: 'slack', workspace });
      if (!store)
        return logger.error(`Slack: ${why}; SLACK_BOT_TOKEN no longer works`, {
          workspace: query.teamId,
        });
      logger.info(`Slack: ${why}; its installation is deleted`, {
        workspaces: workspaces.join(','),
        enterprise: query.enterpriseId ?? '',
      });
    } catch (error) {
      logger.error(`Slack: ${why}, but its installation could not be deleted or its turns ended`, {
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

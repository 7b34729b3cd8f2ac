import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { InstallationQuery, InstallationStore, Logger as BoltLogger } from '@slack/bolt';
import {
  defaultCallbackSuccess,
  ErrorCode,
  InstallProvider,
  type CallbackOptions,
  type CodedError,
  type Installation,
  type StateStore,
} from '@slack/oauth';
import type { WebClientOptions } from '@slack/web-api';
import type { Logger } from '../../../core/logger.ts';
import { INSTALL_PATH, REDIRECT_PATH, type SlackInstallSettings } from '../settings.ts';

export interface SlackInstallsOptions extends SlackInstallSettings {
  clientId: string;
  clientSecret: string;
  /** Bolt's installation store, in Spool's database. */
  installationStore: InstallationStore;
  /** The one-time `state` of install links. */
  stateStore: StateStore;
  /** The Web API's base URL and transport (SLACK_API_URL, a proxy). */
  clientOptions: WebClientOptions;
  /** Where Slack's authorize page is: slack.com's unless SLACK_API_URL names another host. */
  authorizationUrl?: string;
  boltLogger: BoltLogger;
  logger: Logger;
  /** Installed (again): what its uninstall paused resumes, in each workspace it serves. */
  onInstalled?(installed: InstallationQuery<boolean>): Promise<unknown>;
}

/** What the installer's browser is told when an install does not go through. */
const REFUSALS: Partial<Record<string, string>> = {
  [ErrorCode.InvalidStateError]:
    'This install link was used already, has expired, or was opened in another browser. Start again from the install page.',
  [ErrorCode.MissingStateError]:
    'This install arrived without the link Spool gave out. Org-wide installs approved by an admin are accepted only when the operator turns them on (SLACK_ADMIN_INSTALLS_WITHOUT_STATE).',
  [ErrorCode.MissingCodeError]:
    'Slack sent no authorization code. Start again from the install page.',
  [ErrorCode.AuthorizationError]: 'The install was cancelled.',
  not_allowed: 'This Slack workspace may not install Spool: ask the operator to allow it.',
};

/** The error a refused workspace is named with, so the failure page and log say why. */
class NotAllowedError extends Error implements CodedError {
  readonly code = 'not_allowed' as CodedError['code'];
}

/**
 * "Add to Slack" through Bolt's InstallProvider: the install page (`/slack/install`), and the
 * redirect (`/slack/oauth_redirect`) that checks the one-time `state` against the browser's
 * cookie, exchanges the code, and keeps the installation in the store. Its `authorize` gives Bolt
 * each event's own workspace's token. A workspace outside the operator's allow-list is refused
 * (and its new token revoked); an admin's org-wide install without `state` goes through a second
 * provider, without state checks, only when the operator opts in.
 */
export class SlackInstalls {
  private readonly provider: InstallProvider;
  private readonly stateless?: InstallProvider;

  constructor(private readonly options: SlackInstallsOptions) {
    const common = {
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      installationStore: options.installationStore,
      installUrlOptions: { scopes: options.scopes, redirectUri: options.redirectUrl },
      clientOptions: options.clientOptions,
      // The flow's debug lines carry request bodies: codes, the client secret, tokens. Never logged.
      logger: { ...options.boltLogger, debug: () => {} },
      ...(options.authorizationUrl ? { authorizationUrl: options.authorizationUrl } : {}),
    };
    this.provider = new InstallProvider({ ...common, stateStore: options.stateStore });
    if (options.adminInstallsWithoutState)
      this.stateless = new InstallProvider({ ...common, stateVerification: false });
  }

  /** For Bolt's App: the token of the workspace (or organization) an event comes from. */
  readonly authorize: InstallProvider['authorize'] = (source) => this.provider.authorize(source);

  /** The install page and the redirect, or undefined for any other path. */
  handler(): (req: IncomingMessage, res: ServerResponse) => boolean {
    return (req, res) => {
      const url = new URL(req.url ?? '/', 'http://spool');
      if (req.method !== 'GET') return false;
      if (url.pathname === INSTALL_PATH) {
        void this.provider.handleInstallPath(req, res).catch((error: unknown) => {
          this.options.logger.error('Slack: the install page failed', { error: String(error) });
          page(res, 500, 'The install page is unavailable. Please try again later.');
        });
        return true;
      }
      if (url.pathname !== REDIRECT_PATH) return false;
      const provider =
        this.stateless && !url.searchParams.has('state') ? this.stateless : this.provider;
      void provider.handleCallback(req, res, this.callbacks());
      return true;
    };
  }

  private callbacks(): CallbackOptions {
    const { allowedWorkspaces, logger } = this.options;
    return {
      afterInstallation: async (installation) => {
        const ids = [installation.team?.id, installation.enterprise?.id];
        if (!allowedWorkspaces || ids.some((id) => id && allowedWorkspaces.includes(id)))
          return true;
        await this.revoke(installation);
        throw new NotAllowedError(
          `Slack ${ids.filter(Boolean).join('/')} is not allowed to install`,
        );
      },
      successAsync: async (installation, options, req, res) => {
        const installed = {
          teamId: installation.team?.id,
          enterpriseId: installation.enterprise?.id,
          isEnterpriseInstall: installation.isEnterpriseInstall === true,
        };
        await this.options.onInstalled?.(installed)?.catch((error: unknown) =>
          logger.warn('Slack: what the workspace’s uninstall paused did not resume', {
            error: String(error),
          }),
        );
        logger.info('Slack: installed', {
          workspace: installation.team?.id ?? '',
          enterprise: installation.enterprise?.id ?? '',
          orgWide: installation.isEnterpriseInstall === true,
        });
        defaultCallbackSuccess(installation as Installation, options, req, res);
      },
      failure: (error, _options, _req, res) => {
        logger.warn('Slack: an install was refused', { why: error.code, error: error.message });
        page(res, error.code === ErrorCode.UnknownError ? 500 : 400, refusal(error));
      },
    };
  }

  /** A refused workspace's new token, given back: the app leaves that workspace at once. */
  private async revoke(installation: Installation): Promise<void> {
    const token = installation.bot?.token;
    if (!token) return;
    const { WebClient } = await import('@slack/web-api');
    await new WebClient(token, this.options.clientOptions).auth.revoke().catch((error: unknown) =>
      this.options.logger.warn('Slack: could not revoke a refused install’s token', {
        error: String(error),
      }),
    );
  }
}

function refusal(error: CodedError): string {
  return REFUSALS[error.code] ?? 'Spool could not finish the install. Please try again.';
}

/** A page of plain words: what happened, and where to start again. */
function page(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`Spool: ${text}\nInstall page: ${INSTALL_PATH}\n`);
}

/** Both routes as one listener for Spool's HTTP server, in front of `next`. */
export function withInstallRoutes(
  installs: SlackInstalls,
  next?: RequestListener,
): RequestListener {
  const handle = installs.handler();
  return (req, res) => {
    if (handle(req, res)) return;
    if (next) return next(req, res);
    res.writeHead(404);
    res.end();
  };
}

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BOT_USER, SLACK_CLIENT, type FakeSlack, type SlackCall } from './fake-slack.ts';

/** The cookie this fake's authorize page reads the installing browser's workspace from. */
export const SLACK_WORKSPACE_COOKIE = 'slack_workspace';

interface Workspace {
  team: string;
  enterprise?: string;
  /** An org-wide install: keyed by the organization, `team` is null in Slack's answer. */
  orgWide?: boolean;
}

interface Grant extends Workspace {
  /** Tokens of an app with token rotation: 12 hours, with a single-use refresh token. */
  rotating: boolean;
}

/**
 * Slack's side of installs, on a FakeSlack: the authorize page (`/oauth/v2/authorize`, sending the
 * browser back with a code for the workspace its cookie names), `oauth.v2.access` for a code or a
 * refresh token (single use: a spent one is answered `invalid_grant`), `auth.test` and
 * `auth.revoke` by token, and every method refused (`token_revoked`) with a token of an uninstalled
 * workspace.
 */
export class FakeSlackInstalls {
  /** Whether new installs rotate their tokens. */
  rotating = false;
  /** How long a rotating access token lives, in seconds (Slack's: 12 hours). */
  expiresIn = 43_200;
  /** Refresh tokens answered `invalid_grant` (spent already, or never issued). */
  invalidGrants = 0;
  /** Refresh tokens spent. */
  refreshes = 0;
  private readonly codes = new Map<string, { grant: Grant; redirectUri: string }>();
  private readonly tokens = new Map<string, Grant & { revoked?: boolean }>();
  private readonly refreshTokens = new Map<string, Grant & { spent?: boolean }>();

  constructor(private readonly slack: FakeSlack) {
    slack.page = (req, res) => this.page(req, res);
    slack.answer = (call) => this.answer(call);
  }

  /** Uninstalls the app from a workspace (or organization): its tokens stop working. */
  uninstall(id: string): void {
    for (const grant of this.tokens.values())
      if (grant.team === id || grant.enterprise === id) grant.revoked = true;
  }

  /** The workspace a token belongs to, or undefined for one this fake did not issue. */
  teamOf(token: string | undefined): string | undefined {
    return token === undefined ? undefined : this.tokens.get(token)?.team;
  }

  private page(req: IncomingMessage, res: ServerResponse): boolean {
    if (!req.url?.startsWith('/oauth/v2/authorize')) return false;
    const q = new URL(req.url, 'http://slack').searchParams;
    this.slack.calls.push({
      method: 'oauth.v2.authorize',
      args: Object.fromEntries(q),
      at: Date.now(),
    });
    const cookie = /(?:^|;\s*)slack_workspace=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    const [team = 'T1', enterprise, orgWide] = decodeURIComponent(cookie ?? '').split(':');
    if (q.get('client_id') !== SLACK_CLIENT.id || !q.get('scope'))
      return (void res.writeHead(400).end('invalid_client or scope'), true);
    const code = randomUUID();
    const redirectUri = q.get('redirect_uri') ?? '';
    const grant = { team, enterprise, orgWide: orgWide === 'org', rotating: this.rotating };
    this.codes.set(code, { grant, redirectUri });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    if (q.has('state')) back.searchParams.set('state', q.get('state')!);
    res.writeHead(302, { location: back.href }).end();
    return true;
  }

  /** A code for a workspace without the browser: an admin's approval on Slack's side (no state). */
  adminApproval(workspace: Workspace): string {
    const code = randomUUID();
    this.codes.set(code, { grant: { ...workspace, rotating: this.rotating }, redirectUri: '' });
    return code;
  }

  private answer({ method, args, token }: SlackCall): object | undefined {
    if (method === 'oauth.v2.access') return this.access(args);
    const grant = token === undefined ? undefined : this.tokens.get(token);
    if (!grant) return undefined;
    if (grant.revoked) return { ok: false, error: 'token_revoked' };
    if (method === 'auth.revoke') {
      grant.revoked = true;
      return { ok: true, revoked: true };
    }
    if (method === 'auth.test')
      return {
        ok: true,
        url: `https://${grant.team.toLowerCase()}.slack.com/`,
        team: `Team ${grant.team}`,
        user: 'spool',
        team_id: grant.team,
        user_id: BOT_USER,
        bot_id: 'BBOT',
        ...(grant.enterprise ? { enterprise_id: grant.enterprise } : {}),
        is_enterprise_install: grant.orgWide === true,
      };
    return undefined;
  }

  private access(args: Record<string, unknown>): object {
    if (args.client_id !== SLACK_CLIENT.id || args.client_secret !== SLACK_CLIENT.secret)
      return { ok: false, error: 'invalid_client_id' };
    if (args.grant_type === 'refresh_token') {
      const grant = this.refreshTokens.get(String(args.refresh_token));
      if (!grant || grant.spent) {
        this.invalidGrants++;
        return { ok: false, error: 'invalid_grant' };
      }
      grant.spent = true;
      this.refreshes++;
      return this.issue({
        team: grant.team,
        enterprise: grant.enterprise,
        orgWide: grant.orgWide,
        rotating: true,
      });
    }
    const issued = this.codes.get(String(args.code));
    this.codes.delete(String(args.code));
    if (!issued || (issued.redirectUri && issued.redirectUri !== args.redirect_uri))
      return { ok: false, error: 'invalid_code' };
    return this.issue(issued.grant);
  }

  /** oauth.v2.access's answer, as Slack gives it, for a new token (and refresh token). */
  private issue(grant: Grant): object {
    const token = `${grant.rotating ? 'xoxe.xoxb-1' : 'xoxb'}-${grant.team}-${randomUUID()}`;
    this.tokens.set(token, { ...grant });
    const refreshToken = grant.rotating ? `xoxe-1-${randomUUID()}` : undefined;
    if (refreshToken) this.refreshTokens.set(refreshToken, { ...grant });
    return {
      ok: true,
      app_id: 'A1',
      authed_user: { id: 'UINSTALLER' },
      scope: 'app_mentions:read,chat:write,commands',
      token_type: 'bot',
      access_token: token,
      bot_user_id: BOT_USER,
      team: grant.orgWide ? null : { id: grant.team, name: `Team ${grant.team}` },
      enterprise: grant.enterprise
        ? { id: grant.enterprise, name: `Org ${grant.enterprise}` }
        : null,
      is_enterprise_install: grant.orgWide === true,
      ...(refreshToken ? { refresh_token: refreshToken, expires_in: this.expiresIn } : {}),
    };
  }
}

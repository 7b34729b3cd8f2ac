import { webApi } from '@slack/bolt';
import type { Dispatcher } from 'undici';
import type { PlatformSignIn } from '../../core/ports/platform/platform-sign-in.ts';
import type { Person } from '../../core/ports/parked/sign-ins.ts';
import { fetchThrough } from '../../proxy.ts';

export interface SignInWithSlackOptions {
  clientId: string;
  clientSecret: string;
  /** SLACK_API_URL; Slack's own (https://slack.com/api) when not given. */
  apiUrl?: string;
  dispatcher?: Dispatcher;
}

/**
 * Sign in with Slack (OpenID Connect, scope `openid`): the person's browser signs in at Slack, and
 * `openid.connect.userInfo` names the user and the workspace they signed in to.
 */
export class SignInWithSlack implements PlatformSignIn {
  private readonly apiUrl: string;

  constructor(private readonly options: SignInWithSlackOptions) {
    this.apiUrl = options.apiUrl ?? 'https://slack.com/api';
  }

  authorizationUrl({
    state,
    redirectUrl,
    person,
  }: Parameters<PlatformSignIn['authorizationUrl']>[0]) {
    const url = new URL('/openid/connect/authorize', new URL(this.apiUrl).origin);
    url.search = new URLSearchParams({
      response_type: 'code',
      scope: 'openid',
      client_id: this.options.clientId,
      state,
      redirect_uri: redirectUrl,
      // Straight to the person's workspace: no choosing among the browser's others.
      ...(person ? { team: person.workspace } : {}),
    }).toString();
    return url.href;
  }

  async isPerson(person: Person, code: string, redirectUrl: string): Promise<boolean> {
    const who = await this.identify(code, redirectUrl);
    return who.user === person.user && who.workspace === person.workspace;
  }

  async identify(code: string, redirectUrl: string): Promise<Person> {
    const { clientId, clientSecret } = this.options;
    const { access_token: token } = await this.client().openid.connect.token({
      client_id: clientId,
      client_secret: clientSecret,
      code,
      redirect_uri: redirectUrl,
    });
    if (!token) throw new Error('Slack gave no token for the code');
    const who = await this.client(token).openid.connect.userInfo();
    const user = who['https://slack.com/user_id'];
    const workspace = who['https://slack.com/team_id'];
    if (!user || !workspace) throw new Error('Slack named no user or workspace for the code');
    return { platform: 'slack', workspace, user };
  }

  private client(token?: string): webApi.WebClient {
    const { dispatcher } = this.options;
    // A browser is waiting on the answer: no retries for half a minute.
    return new webApi.WebClient(token, {
      slackApiUrl: `${this.apiUrl}/`,
      retryConfig: { retries: 0 },
      timeout: 10_000,
      ...(dispatcher ? { fetch: fetchThrough(dispatcher) } : {}),
    });
  }
}

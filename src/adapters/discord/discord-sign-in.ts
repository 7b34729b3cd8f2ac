import {
  REST,
  Routes,
  type APIUser,
  type RESTOptions,
  type RESTPostOAuth2AccessTokenResult,
} from 'discord.js';
import type { Dispatcher } from 'undici';
import type { PlatformSignIn } from '../../core/ports/platform/platform-sign-in.ts';
import type { Person } from '../../core/ports/parked/sign-ins.ts';

export interface DiscordSignInOptions {
  /** The application's id (DISCORD_APPLICATION_ID): its OAuth2 client id. */
  applicationId: string;
  clientSecret: string;
  /** DISCORD_API_URL; Discord's own (https://discord.com/api) when not given. */
  apiUrl?: string;
  dispatcher?: Dispatcher;
}

/**
 * Discord's OAuth2 with the `identify` scope: the person's browser signs in at Discord, and
 * /users/@me names them. A Discord user id is the same in every server, so the id alone decides.
 */
export class DiscordSignIn implements PlatformSignIn {
  private readonly rest: Partial<RESTOptions>;

  constructor(private readonly options: DiscordSignInOptions) {
    const agent = options.dispatcher as unknown as RESTOptions['agent'] | undefined;
    this.rest = {
      ...(options.apiUrl ? { api: options.apiUrl } : {}),
      ...(agent ? { agent } : {}),
    };
  }

  authorizationUrl({ state, redirectUrl }: Parameters<PlatformSignIn['authorizationUrl']>[0]) {
    const api = this.options.apiUrl ?? 'https://discord.com/api';
    const url = new URL(`${api}/v10${Routes.oauth2Authorization()}`);
    url.search = new URLSearchParams({
      response_type: 'code',
      scope: 'identify',
      client_id: this.options.applicationId,
      state,
      redirect_uri: redirectUrl,
      // Once the person has allowed it, Discord asks no more.
      prompt: 'none',
    }).toString();
    return url.href;
  }

  async isPerson(person: Person, code: string, redirectUrl: string): Promise<boolean> {
    return (await this.identify(code, redirectUrl)).user === person.user;
  }

  async identify(code: string, redirectUrl: string): Promise<Person> {
    const token = (await new REST(this.rest).post(Routes.oauth2TokenExchange(), {
      auth: false,
      passThroughBody: true,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUrl,
        client_id: this.options.applicationId,
        client_secret: this.options.clientSecret,
      }).toString(),
    })) as RESTPostOAuth2AccessTokenResult;
    const me = (await new REST({ ...this.rest, authPrefix: 'Bearer' })
      .setToken(token.access_token)
      .get(Routes.user())) as APIUser;
    return { platform: 'discord', workspace: '', user: me.id };
  }
}

import { WebClient, type WebClientOptions } from '@slack/web-api';

/**
 * Spends a refresh token at Slack (`oauth.v2.access`, `grant_type=refresh_token`) for a new access
 * token and the next refresh token; Slack answers `invalid_grant` to one spent already. No retries:
 * a refresh the caller does not hear about must not be sent twice.
 */
export function refreshBotToken(options: {
  clientId: string;
  clientSecret: string;
  clientOptions: WebClientOptions;
}) {
  const client = new WebClient(undefined, {
    ...options.clientOptions,
    retryConfig: { retries: 0 },
    timeout: 20_000,
  });
  return async (refreshToken: string) => {
    const answer = await client.oauth.v2.access({
      client_id: options.clientId,
      client_secret: options.clientSecret,
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
    });
    if (!answer.access_token || !answer.refresh_token || !answer.expires_in)
      throw new Error('Slack answered the token refresh without a new token pair');
    return {
      accessToken: answer.access_token,
      refreshToken: answer.refresh_token,
      expiresIn: answer.expires_in,
    };
  };
}

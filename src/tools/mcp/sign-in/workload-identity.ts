import { readFile } from 'node:fs/promises';
import type {
  OAuthClientInformation,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthTokens,
} from '@modelcontextprotocol/client';

/** RFC 7523's grant: a signed JWT, here the workload's own identity token, for an access token. */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export interface WorkloadIdentityOptions {
  clientId: string;
  /**
   * Where the platform keeps the workload's identity token (a Kubernetes projected service
   * account token, a cloud's metadata file): read at every token request, since it rotates.
   */
  assertionFile: string;
  scope?: string;
}

/**
 * Workload identity federation (SEP-1933): Spool, running as a workload its platform vouches for,
 * trades the platform's JWT for the server's token with the jwt-bearer grant (RFC 7523 §2.1), no
 * secret of its own. The SDK's token request and its errors are used as they are: a refused
 * assertion is reported, never retried with another grant.
 */
export class WorkloadIdentityProvider implements OAuthClientProvider {
  private current?: OAuthTokens;

  constructor(private readonly options: WorkloadIdentityOptions) {}

  // No redirect: the SDK's flow is then the non-interactive one, a token request at once.
  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Spool',
      redirect_uris: [],
      grant_types: [JWT_BEARER_GRANT],
      token_endpoint_auth_method: 'none',
      ...(this.options.scope ? { scope: this.options.scope } : {}),
    };
  }

  clientInformation(): OAuthClientInformation {
    return { client_id: this.options.clientId };
  }

  tokens(): OAuthTokens | undefined {
    return this.current;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.current = tokens;
  }

  redirectToAuthorization(): void {
    throw new Error('workload identity has no authorization page');
  }

  saveCodeVerifier(): void {}

  codeVerifier(): string {
    throw new Error('workload identity has no authorization code');
  }

  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    const assertion = (await readFile(this.options.assertionFile, 'utf8')).trim();
    const params = new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion });
    const wanted = scope ?? this.options.scope;
    if (wanted) params.set('scope', wanted);
    return params;
  }
}

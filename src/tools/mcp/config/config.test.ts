import { describe, expect, it } from 'vitest';
import { McpConfigError, parseMcpConfig } from './config.ts';

const SECRETS = new Set(['OPENAI_API_KEY', 'SLACK_BOT_TOKEN']);
const parse = (servers: unknown, env: Record<string, string> = {}) =>
  parseMcpConfig(JSON.stringify({ mcpServers: servers }), '/etc/spool/mcp.json', env, SECRETS);

describe('parseMcpConfig', () => {
  it('reads stdio and http servers in the Claude Desktop format', () => {
    const config = parse(
      {
        fs: {
          command: 'npx',
          args: ['-y', 'server', '${HOME_DIR}'],
          env: { TOKEN: '${GH_TOKEN}' },
          timeoutMs: 5000,
          allowedTools: ['read'],
        },
        remote: {
          url: 'https://example.test/mcp',
          headers: { Authorization: 'Bearer ${API:-none}' },
        },
        legacy: { type: 'sse', url: 'https://example.test/sse' },
      },
      { HOME_DIR: '/home/me', GH_TOKEN: 'ghp_x' },
    );
    expect(config.problems).toEqual([]);
    expect(config.servers).toEqual([
      {
        kind: 'stdio',
        name: 'fs',
        command: 'npx',
        args: ['-y', 'server', '/home/me'],
        env: { TOKEN: 'ghp_x' },
        cwd: '/etc/spool',
        timeoutMs: 5000,
        maxTimeoutMs: 600_000,
        allowedTools: ['read'],
        blockedTools: undefined,
      },
      {
        kind: 'http',
        name: 'remote',
        url: new URL('https://example.test/mcp'),
        headers: { Authorization: 'Bearer none' },
        transport: 'streamable-http',
        identity: 'spool',
        timeoutMs: 60_000,
        maxTimeoutMs: 600_000,
        allowedTools: undefined,
        blockedTools: undefined,
      },
      {
        kind: 'http',
        name: 'legacy',
        url: new URL('https://example.test/sse'),
        headers: {},
        transport: 'sse',
        oauth: { grant: 'authorization_code' },
        identity: 'spool',
        timeoutMs: 60_000,
        maxTimeoutMs: 600_000,
        allowedTools: undefined,
        blockedTools: undefined,
      },
    ]);
  });

  it('reads OAuth clients, their secrets from the environment, and names each bad entry', () => {
    const config = parse(
      {
        machine: {
          url: 'https://a.test/mcp',
          oauth: { grant: 'client_credentials', clientId: 'spool', clientSecret: '${SECRET}' },
        },
        signed: {
          url: 'https://a.test/mcp',
          oauth: {
            grant: 'client_credentials',
            clientId: 'spool',
            privateKey: '${PEM}',
            signingAlgorithm: 'ES256',
          },
        },
        both: { url: 'https://a.test/mcp', headers: { authorization: 'x' }, oauth: {} },
        nosecret: {
          url: 'https://a.test/mcp',
          oauth: { grant: 'client_credentials', clientId: 'x' },
        },
        noid: { url: 'https://a.test/mcp', oauth: { clientSecret: 'x' } },
        typo: { url: 'https://a.test/mcp', oauth: { clientID: 'x', grant: 'password' } },
      },
      { SECRET: 's3cret', PEM: '-----BEGIN PRIVATE KEY-----' },
    );
    expect(config.servers.map((s) => s.kind === 'http' && s.oauth)).toEqual([
      { grant: 'client_credentials', clientId: 'spool', clientSecret: 's3cret' },
      {
        grant: 'client_credentials',
        clientId: 'spool',
        privateKey: '-----BEGIN PRIVATE KEY-----',
        signingAlgorithm: 'ES256',
      },
    ]);
    expect(config.problems).toEqual([
      'MCP server "both": give "oauth" or an Authorization header, not both',
      'MCP server "nosecret": "oauth.grant" client_credentials needs "clientSecret" or "privateKey" (one)',
      'MCP server "noid": "oauth.clientSecret" and "oauth.privateKey" need "oauth.clientId"',
      'MCP server "typo": unknown "oauth" key "clientID" (allowed: grant, clientId, clientSecret, privateKey, signingAlgorithm, scope, issuer, assertionFile, dpop)',
    ]);
  });

  it("reads servers used with each person's own sign-in, and refuses one that cannot be", () => {
    const config = parse({
      notes: { url: 'https://notes.test/mcp', identity: 'person', oauth: { scope: 'read' } },
      shared: {
        url: 'https://a.test/mcp',
        identity: 'person',
        headers: { Authorization: 'Bearer x' },
      },
      machine: {
        url: 'https://a.test/mcp',
        identity: 'person',
        oauth: { grant: 'client_credentials', clientId: 'spool', clientSecret: 's' },
      },
      odd: { url: 'https://a.test/mcp', identity: 'everyone' },
    });
    expect(config.servers).toMatchObject([
      { name: 'notes', identity: 'person', oauth: { grant: 'authorization_code', scope: 'read' } },
    ]);
    expect(config.problems).toEqual([
      'MCP server "shared": "identity": "person" needs each person to sign in: no Authorization header, and "oauth.grant" authorization_code or cross_app_access',
      'MCP server "machine": "identity": "person" needs each person to sign in: no Authorization header, and "oauth.grant" authorization_code or cross_app_access',
      'MCP server "odd": "identity" must be person or spool',
    ]);
  });

  it('reads an enterprise identity provider and the servers that take cross-app access, and refuses what cannot work', () => {
    const servers = {
      docs: {
        url: 'https://docs.test/mcp',
        identity: 'person',
        oauth: {
          grant: 'cross_app_access',
          clientId: 'spool',
          clientSecret: '${DOCS_SECRET}',
          issuer: 'https://auth.docs.test',
        },
      },
      stray: { url: 'https://a.test/mcp', oauth: { issuer: 'https://auth.a.test' } },
      shared: {
        url: 'https://a.test/mcp',
        oauth: { grant: 'cross_app_access', clientId: 'spool', clientSecret: 's' },
      },
      nosecret: {
        url: 'https://a.test/mcp',
        identity: 'person',
        oauth: { grant: 'cross_app_access', clientId: 'spool' },
      },
      okta: { url: 'https://a.test/mcp' },
    };
    const config = parseMcpConfig(
      JSON.stringify({
        identityProvider: {
          name: 'okta',
          issuer: 'https://acme.okta.test',
          clientId: 'spool-idp',
          clientSecret: '${IDP_SECRET}',
          scope: 'email',
        },
        mcpServers: servers,
      }),
      '/etc/spool/mcp.json',
      { DOCS_SECRET: 'd', IDP_SECRET: 'i' },
      SECRETS,
    );
    expect(config.identityProvider).toEqual({
      name: 'okta',
      issuer: 'https://acme.okta.test',
      clientId: 'spool-idp',
      clientSecret: 'i',
      scope: 'openid email',
    });
    expect(config.servers).toMatchObject([
      {
        name: 'docs',
        identity: 'person',
        oauth: {
          grant: 'cross_app_access',
          clientId: 'spool',
          clientSecret: 'd',
          issuer: 'https://auth.docs.test',
        },
      },
    ]);
    expect(config.problems).toEqual([
      'MCP server "stray": "oauth.issuer" is for "oauth.grant" cross_app_access',
      'MCP server "shared": "oauth.grant" cross_app_access acts as each person: add "identity": "person"',
      'MCP server "nosecret": "oauth.grant" cross_app_access needs "clientSecret"',
      'MCP server "okta": has the name of the "identityProvider": rename one of them',
    ]);
    // Without an identity provider there is nothing to exchange, and a broken one is named.
    expect(parse({ docs: servers.docs }, { DOCS_SECRET: 'd' }).problems).toEqual([
      'MCP server "docs": "oauth.grant" cross_app_access needs an "identityProvider" beside "mcpServers"',
    ]);
    const broken = parseMcpConfig(
      JSON.stringify({ identityProvider: { issuer: 'https://idp.test' }, mcpServers: {} }),
      '/etc/spool/mcp.json',
      {},
      SECRETS,
    );
    expect(broken.problems).toEqual(['"identityProvider": needs "issuer" and "clientId"']);
  });

  it('skips disabled servers silently', () => {
    expect(parse({ off: { command: 'x', enabled: false } })).toEqual({ servers: [], problems: [] });
  });

  it('names each broken server and keeps the good ones', () => {
    const config = parse({
      typo: { comand: 'npx' },
      extra: { command: 'x', colour: 'red' },
      missing: { command: '${NOPE}' },
      leak: { command: 'x', env: { KEY: '${OPENAI_API_KEY}' } },
      badTimeout: { command: 'x', timeoutMs: -1 },
      badMax: { command: 'x', timeoutMs: 5_000, maxTimeoutMs: 1_000 },
      badUrl: { url: 'ftp://x' },
      good: { command: 'ok' },
    });
    expect(config.servers.map((s) => s.name)).toEqual(['good']);
    expect(config.problems).toEqual([
      'MCP server "typo": unknown key "comand" (allowed: type, command, args, env, cwd, enabled, timeoutMs, maxTimeoutMs, allowedTools, blockedTools, idempotentTools, sampling, roots)',
      'MCP server "extra": unknown key "colour" (allowed: type, command, args, env, cwd, enabled, timeoutMs, maxTimeoutMs, allowedTools, blockedTools, idempotentTools, sampling, roots)',
      'MCP server "missing": ${NOPE} is not set',
      'MCP server "leak": ${OPENAI_API_KEY} is Spool\'s own secret and is never passed to a tool server',
      'MCP server "badTimeout": "timeoutMs" must be a positive whole number',
      'MCP server "badMax": "maxTimeoutMs" must be a whole number no smaller than "timeoutMs"',
      'MCP server "badUrl": "url" must be http(s)',
    ]);
  });

  it("reads the tools an operator marks idempotent, by the server's names, and refuses a list that is not one", () => {
    const config = parse({
      tickets: { command: 'x', idempotentTools: ['close_ticket'] },
      bad: { command: 'x', idempotentTools: 'close_ticket' },
    });
    expect(config.servers.map((s) => [s.name, s.idempotentTools])).toEqual([
      ['tickets', ['close_ticket']],
    ]);
    expect(config.problems).toEqual([
      'MCP server "bad": "idempotentTools" must be an array of strings',
    ]);
  });

  it('fails as a whole only on a file that is not a config, saying where', () => {
    expect(() =>
      parseMcpConfig(
        '{\n  "mcpServers": {\n    "fs": { "command": "x", }\n  }\n}',
        'mcp.json',
        {},
        SECRETS,
      ),
    ).toThrow(/^mcp\.json is not valid JSON at line 3, column 29: /);
    expect(() => parseMcpConfig('{oops', 'mcp.json', {}, SECRETS)).toThrow(McpConfigError);
    expect(() => parseMcpConfig('{"tools": {}}', 'mcp.json', {}, SECRETS)).toThrow(
      'mcp.json must have an "mcpServers" object (or VS Code\'s "servers")',
    );
  });

  it("reads VS Code's servers form and Cursor's ${env:VAR}", () => {
    const text = JSON.stringify({
      servers: { fs: { type: 'stdio', command: 'npx', args: ['-y', 'server', '${env:ROOT}'] } },
    });
    const config = parseMcpConfig(text, '/etc/spool/mcp.json', { ROOT: '/srv' }, SECRETS);
    expect(config.problems).toEqual([]);
    expect(config.servers).toMatchObject([
      { kind: 'stdio', name: 'fs', command: 'npx', args: ['-y', 'server', '/srv'] },
    ]);
    expect(parse({ leak: { command: 'x', env: { K: '${env:OPENAI_API_KEY}' } } }).problems).toEqual(
      [
        'MCP server "leak": ${OPENAI_API_KEY} is Spool\'s own secret and is never passed to a tool server',
      ],
    );
  });

  it('reads workload identity (jwt_bearer with the token file) and DPoP, and says what is wrong', () => {
    const config = parse(
      {
        wif: {
          url: 'https://example.test/mcp',
          oauth: { grant: 'jwt_bearer', clientId: 'spool', assertionFile: '${TOKEN_FILE}' },
        },
        bound: { url: 'https://example.test/mcp', oauth: { dpop: true } },
      },
      { TOKEN_FILE: '/var/run/secrets/spool/token' },
    );
    expect(config.problems).toEqual([]);
    expect(config.servers.map((s) => (s.kind === 'http' ? s.oauth : undefined))).toEqual([
      { grant: 'jwt_bearer', clientId: 'spool', assertionFile: '/var/run/secrets/spool/token' },
      { grant: 'authorization_code', dpop: true },
    ]);
    const url = 'https://example.test/mcp';
    expect(
      parse({
        a: { url, oauth: { grant: 'jwt_bearer', clientId: 'x' } },
        b: {
          url,
          oauth: { grant: 'jwt_bearer', clientId: 'x', assertionFile: '/t', clientSecret: 's' },
        },
        c: { url, oauth: { assertionFile: '/t' } },
        d: { url, oauth: { dpop: 'yes' } },
        e: { url, oauth: { grant: 'jwt_bearer', assertionFile: '/t' } },
      }).problems,
    ).toEqual([
      'MCP server "a": "oauth.grant" jwt_bearer needs "assertionFile"',
      'MCP server "b": "oauth.grant" jwt_bearer proves itself with the workload\'s token: no "clientSecret" or "privateKey"',
      'MCP server "c": "oauth.assertionFile" is for "oauth.grant" jwt_bearer',
      'MCP server "d": "oauth.dpop" must be true or false',
      'MCP server "e": "oauth.grant" jwt_bearer needs "clientId"',
    ]);
  });

  it('reads what a server is offered: sampling with its limits, roots as file URIs', () => {
    const config = parse({
      a: {
        command: 'x',
        sampling: true,
        roots: ['work', { uri: 'file:///srv/data', name: 'data' }],
      },
      b: { command: 'x', sampling: { maxTokens: 200, perCall: 1 } },
    });
    expect(config.servers).toMatchObject([
      {
        sampling: { maxTokens: 1000, perCall: 3 },
        roots: [{ uri: 'file:///etc/spool/work' }, { uri: 'file:///srv/data', name: 'data' }],
      },
      { sampling: { maxTokens: 200, perCall: 1 } },
    ]);
    expect(
      parse({
        c: { command: 'x', sampling: { maxTokens: 0 } },
        d: { command: 'x', roots: ['https://example.test/repo'] },
        e: { command: 'x', roots: 'work' },
      }).problems,
    ).toEqual([
      'MCP server "c": "sampling" must be true, or { "maxTokens": N, "perCall": N } with positive whole numbers',
      'MCP server "d": "roots" are folders or file:// URIs, not https://example.test/repo',
      'MCP server "e": "roots" must be an array',
    ]);
  });
});

/**
 * The client under test for the official MCP conformance suite (`conformance client --command`):
 * Spool's own MCP client, configured as an `mcp.json` entry `{ "url": … }` would configure it,
 * against the scenario's server, whose URL the suite appends to the command. Standing in for a
 * model, it calls each tool the server offers once, with arguments made from the tool's schema, or
 * the calls the scenario names (its context's `toolCalls`).
 * Exits non-zero when it could not connect or a call failed.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolSpec } from '../../../src/core/ports/tools.ts';
import { parseMcpConfig } from '../../../src/tools/mcp/config/config.ts';
import { signInServers } from '../../../src/tools/mcp/sign-in/cross-app.ts';
import { login } from '../../../src/tools/mcp/sign-in/login.ts';
import type { OAuthRecord } from '../../../src/tools/mcp/sign-in/oauth.ts';
import { SignIns } from '../../../src/tools/mcp/sign-in/sign-in.ts';
import { CLIENT_INFO, McpToolSource } from '../../../src/tools/mcp/source.ts';
import { MemoryPersonVault } from '../../support/memory-person-vault.ts';
import { silentLogger } from '../../support/logger.ts';
import { endingRegistry } from '../../support/ended-calls.ts';

const url = process.argv.at(-1)!;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Record<
  string,
  string
> & {
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
};

/**
 * Where a workload's platform keeps its identity token (a Kubernetes projected token): the one the
 * scenario's platform handed out.
 */
function workloadTokenFile(token: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'spool-workload-')), 'token');
  writeFileSync(file, token);
  return file;
}

/** The `oauth` entry an operator would write for this scenario's server, from what it hands out. */
function oauthEntry(): Record<string, string | boolean> {
  // Workload identity: the platform's token for Spool is traded for the server's (SEP-1933).
  if (context.valid_jwt)
    return {
      grant: 'jwt_bearer',
      clientId: context.client_id!,
      assertionFile: workloadTokenFile(context.valid_jwt),
    };
  // The operator's server binds its tokens to Spool's key (SEP-1932).
  if (scenario.startsWith('auth/dpop')) return { dpop: true };
  // An enterprise identity provider: each person's sign-in to it is exchanged for the server's token.
  if (context.idp_issuer)
    return {
      grant: 'cross_app_access',
      clientId: context.client_id!,
      clientSecret: context.client_secret!,
    };
  if (context.private_key_pem)
    return {
      grant: 'client_credentials',
      clientId: context.client_id!,
      privateKey: context.private_key_pem,
      signingAlgorithm: context.signing_algorithm ?? 'ES256',
    };
  if (scenario.startsWith('auth/client-credentials'))
    return {
      grant: 'client_credentials',
      clientId: context.client_id!,
      clientSecret: context.client_secret!,
    };
  if (context.client_id)
    return { clientId: context.client_id, clientSecret: context.client_secret ?? '' };
  return {};
}

/** The `identityProvider` an operator would write beside `mcpServers`, where the scenario has one. */
const identityProvider = context.idp_issuer
  ? {
      identityProvider: {
        issuer: context.idp_issuer,
        tokenEndpoint: context.idp_token_endpoint!,
        clientId: context.idp_client_id!,
      },
    }
  : {};

const config = parseMcpConfig(
  JSON.stringify({
    ...identityProvider,
    mcpServers: {
      conformance: {
        url,
        timeoutMs: 10_000,
        ...(context.idp_issuer ? { identity: 'person' } : {}),
        oauth: oauthEntry(),
      },
    },
  }),
  join(tmpdir(), 'mcp.json'),
  {},
  new Set(),
);
const records = new Map<string, OAuthRecord>();
const identity = {
  redirectUrl: 'http://127.0.0.1:33418/callback',
  // The suite's CIMD scenario expects this client id.
  clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
};

/** The person the calls are made for, where the server acts as each person. */
const person = { platform: 'console', workspace: 'local', user: 'conformance' };

/**
 * People's sign-ins, where the server acts as each person. The suite's identity provider has no
 * page to sign in at: it hands out the ID token a person's sign-in to it would have brought back,
 * which is kept as that sign-in is (the identity provider's own access token is never used).
 */
async function personSignIns(): Promise<SignIns | undefined> {
  const servers = signInServers(config);
  if (servers.length === 0) return undefined;
  const vault = new MemoryPersonVault();
  if (config.identityProvider && context.idp_id_token)
    await vault.write(config.identityProvider.name, person, {
      serverUrl: new URL(config.identityProvider.issuer).href,
      tokens: { access_token: '', token_type: 'Bearer', id_token: context.idp_id_token },
    });
  // The one person is at this machine, as on the console: no chat platform to check them with.
  return new SignIns(servers, {
    vault,
    identity,
    linkUrl: new URL('/mcp/sign-in', identity.redirectUrl).href,
    platforms: { [person.platform]: 'local' },
    onSignedIn: () => {},
    logger: silentLogger,
  });
}

const oauth = {
  vault: {
    read: async (server: string) => records.get(server),
    write: async (server: string, record: OAuthRecord) => void records.set(server, record),
  },
  identity,
  signIns: await personSignIns(),
};
const limits = { maxMessageBytes: 10_485_760, binaryMaxBytes: 1_000_000 };

/**
 * The operator, played as the suite's authorization servers allow: they approve at once and send
 * the browser back with the code, which is read off the redirect instead of followed.
 */
async function operator(authorizationUrl: string): Promise<string> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  return response.headers.get('location') ?? '';
}

/** What an operator does when Spool says a server needs login: runs `mcp login`. */
async function logIn(): Promise<void> {
  const server = config.servers[0]!;
  if (server.kind !== 'http' || !server.oauth) throw new Error('not an OAuth server');
  await login(
    { ...server, oauth: server.oauth },
    oauth.vault,
    oauth.identity,
    operator,
    CLIENT_INFO,
  );
}

/** The simplest value of a JSON Schema property: what a model would fill in for a test call. */
function sample(schema: { type?: unknown; enum?: unknown[]; default?: unknown }): unknown {
  if (schema.default !== undefined) return schema.default;
  if (schema.enum?.length) return schema.enum[0];
  return (
    { number: 1, integer: 1, boolean: true, array: [], object: {} }[String(schema.type)] ?? 'test'
  );
}

const argumentsFor = (tool: ToolSpec) => {
  const properties = (tool.parameters.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = (tool.parameters.required ?? []) as string[];
  return Object.fromEntries(required.map((name) => [name, sample(properties[name] ?? {})]));
};

/** The server's tool `name`, as Spool offers it (`<server>__<name>`). */
const toolNamed = (tools: ToolSpec[], name: string) =>
  tools.find((t) => t.name.endsWith(`__${name}`)) ?? { name, parameters: {} };

type Call = { name: string; args: Record<string, unknown> };

/**
 * The calls a scenario's description tells the client to make, where it names no calls in its
 * context: none where the model needs no skill (so none of a skill's files may be read), nor where
 * only the listing is tested (its server answers no call); the focal tool's input schema, as Spool
 * holds it for the model, sent back through the echo tool, where the scenario checks what of JSON
 * Schema 2020-12 Spool keeps.
 */
const SCRIPTS: Record<string, (tools: ToolSpec[]) => Call[]> = {
  'sep-2640-client-no-prefetch': () => [],
  'json-schema-ref-no-deref': () => [],
  'json-schema-2020-12-preservation': (tools) => [
    {
      name: toolNamed(tools, 'json_schema_echo').name,
      args: { schema: toolNamed(tools, 'json_schema_2020_12_tool').parameters },
    },
  ],
};

/**
 * What a model would call: the scenario's calls where it names them, in its description (SCRIPTS)
 * or its context, else each tool once.
 */
const callsOf = (tools: ToolSpec[]) =>
  SCRIPTS[scenario]?.(tools) ??
  context.toolCalls?.map((call) => ({
    name: toolNamed(tools, call.name).name,
    args: call.arguments,
  })) ??
  tools.map((tool) => ({ name: tool.name, args: argumentsFor(tool) }));

const conversation = {
  id: 'conformance',
  platform: person.platform,
  workspace: person.workspace,
  channel: 'local',
  thread: 'main',
};

/**
 * Starts Spool's MCP client, as the bot does at start, and calls every tool once. Where the
 * server says it needs login, the operator logs in and Spool starts again: at most twice (a first
 * login, then a step-up to a wider scope).
 */
async function run(logins: number): Promise<boolean> {
  const source = await McpToolSource.start(config, silentLogger, limits, oauth);
  const registry = endingRegistry([source]);
  let needsLogin = source.problems().some((p) => p.includes('needs login'));
  let failed = false;
  try {
    // start() resolves once the first connection attempt is over, with the tools listed.
    for (const { name, args } of needsLogin ? [] : callsOf(registry.list())) {
      const outcome = await registry.call(name, args, {
        conversation,
        turn: 1,
        // Whose message the turn answers: the person a server used with each one's sign-in acts as.
        user: person.user,
        callId: randomUUID(),
        signal: new AbortController().signal,
        reading: { transcript: [], viewChars: 100_000 },
        // A person who submits the form as shown: every field left as its default offers it.
        askForm: async () => ({ action: 'accept', content: {} }),
      });
      console.error(
        `${name}: ${outcome.isError ? 'error' : 'ok'}: ${outcome.content.slice(0, 200)}`,
      );
      needsLogin ||= outcome.isError && outcome.content.includes('log in again');
      failed ||= outcome.isError;
    }
  } finally {
    await source.close();
  }
  if (!needsLogin || logins === 0) return !failed && !needsLogin;
  await logIn();
  return run(logins - 1);
}

process.exit((await run(2)) ? 0 : 1);

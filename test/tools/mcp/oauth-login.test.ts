import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open } from '../../../src/store/credentials/oauth-vault.ts';
import type { OAuthRecord } from '../../../src/tools/mcp/sign-in/oauth.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { freePort, runSpool, startSpool, until } from '../../support/process.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';

/** The MCP SDK's own example server behind its demo authorization server: OAuth as a team meets it. */
const EXAMPLE_SERVER = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/sdk/examples/server/simpleStreamableHttp.js',
);

let fake: FakeOpenAi;
let server: ChildProcess;
let dir: string;
let env: Record<string, string>;
const key = randomBytes(32);
const serverName = `demo${Date.now()}`;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  const [mcpPort, authPort, redirectPort] = [await freePort(), await freePort(), await freePort()];
  server = spawn(process.execPath, [EXAMPLE_SERVER, '--oauth'], {
    env: { ...process.env, MCP_PORT: String(mcpPort), MCP_AUTH_PORT: String(authPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  server.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `http://localhost:${mcpPort}/mcp`;
  await until(() => {
    if (server.exitCode !== null) throw new Error(`the example server exited: ${stderr}`);
    return fetch(url, { method: 'POST' }).then(
      () => true,
      () => undefined,
    );
  });
  dir = await mkdtemp(join(tmpdir(), 'spool-oauth-'));
  await writeFile(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { [serverName]: { url } } }));
  env = {
    OPENAI_BASE_URL: fake.baseURL,
    DATABASE_URL: fileDatabaseUrl(),
    MCP_CONFIG: join(dir, 'mcp.json'),
    MCP_OAUTH_KEY: key.toString('base64'),
    MCP_OAUTH_REDIRECT_URL: `http://127.0.0.1:${redirectPort}/callback`,
  };
});
afterAll(async () => {
  server.kill();
  await fake.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Every row of every table of the database, as text. */
async function everyRow(): Promise<string> {
  const client = new pg.Client({ connectionString: fileDatabaseUrl() });
  await client.connect();
  try {
    const { rows } = await client.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
    );
    let text = '';
    for (const { tablename } of rows) {
      const dump = await client.query<{ row: string }>(
        `SELECT t::text AS row FROM "${tablename}" t`,
      );
      text += dump.rows.map((r) => r.row).join('\n');
    }
    return text;
  } finally {
    await client.end();
  }
}

describe('an MCP server behind OAuth', () => {
  it('is reported as needing login, is logged in to once, and its tokens never leave the vault', async () => {
    // The bot: /readyz names the server and the command, after the first attempt.
    const port = await freePort();
    const bot = startSpool(['chat'], { env: { ...env, PORT: String(port) } });
    const readyz = await until(async () => {
      const body = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.text(),
        () => '',
      );
      return body.includes(serverName) ? body : undefined;
    });
    expect(readyz).toContain(
      `MCP server "${serverName}": needs login (npm start -- mcp login ${serverName})`,
    );
    bot.child.stdin.end();
    expect((await bot.done).code).toBe(0);

    // The operator logs in: the browser, sent back to the loopback address, completes it.
    const login = startSpool(['mcp', 'login', serverName], { env });
    let printed = '';
    login.child.stdout.on('data', (d: Buffer) => (printed += d.toString()));
    const authorizationUrl = await until(() => /^\s+(http\S+)$/m.exec(printed)?.[1]);
    const approved = await fetch(authorizationUrl, { redirect: 'manual' });
    const landing = await fetch(approved.headers.get('location')!);
    expect(await landing.text()).toContain('Spool is logged in');
    const loggedIn = await login.done;
    expect(loggedIn.code).toBe(0);
    expect(loggedIn.stdout).toContain(`Logged in to "${serverName}"`);

    // The next start calls the server's tool with the stored token.
    fake.enqueue(
      { toolCalls: [{ id: 'g', name: `${serverName}__greet`, arguments: '{"name":"Spool"}' }] },
      (request) => ({ content: `tool said: ${request.messages.at(-1)!.content}` }),
    );
    const chat = await runSpool(['chat', '--session', `oauth-${Date.now()}`], {
      env,
      input: 'greet me\n',
    });
    expect(chat.stdout).toBe('tool said: Hello, Spool!\n');

    // The tokens, as the vault holds them: nowhere else, in no log and no request to the model.
    const client = new pg.Client({ connectionString: fileDatabaseUrl() });
    await client.connect();
    const { rows } = await client
      .query<{ sealed: string }>('SELECT sealed FROM mcp_oauth WHERE server = $1', [serverName])
      .finally(() => client.end());
    const record = JSON.parse(open(rows[0]!.sealed, key, serverName)) as OAuthRecord;
    // The demo authorization server issues no refresh token.
    const secrets = [record.tokens!.access_token];
    expect(secrets[0]!.length).toBeGreaterThanOrEqual(16);
    const seen = [
      await everyRow(),
      loggedIn.stdout + loggedIn.stderr,
      chat.stdout + chat.stderr,
      JSON.stringify(fake.requests),
    ].join('\n');
    for (const secret of secrets) expect(seen).not.toContain(secret);
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';
import { EVERYTHING_SERVER, REPO_ROOT } from '../../support/process.ts';
import { onTerminal } from '../../support/terminal.ts';

/** A server of the 2026-07-28 era only: it asks in its results (`input_required`). */
const MODERN = fileURLToPath(new URL('../../fixtures/modern-mcp-server.mjs', import.meta.url));

/**
 * The servers the tests call. Each test's process starts only the server it calls: every stdio
 * server is started twice (once to ask its era), and four for each of five processes were 40
 * starts where 10 do.
 */
const SERVERS = {
  modern: { command: process.execPath, args: [MODERN, 'stdio'] },
  everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] },
  // Its calls may go a second without a word from it, but for a page the person is on.
  asker: {
    command: process.execPath,
    args: [join(REPO_ROOT, 'test/fixtures/asking-mcp-server.mjs')],
    timeoutMs: 1000,
  },
  // The same, for a page the server never says is done: 2 s in all.
  stuck: {
    command: process.execPath,
    args: [join(REPO_ROOT, 'test/fixtures/asking-mcp-server.mjs')],
    timeoutMs: 1000,
    maxTimeoutMs: 2000,
  },
};

let fake: FakeOpenAi;
let dir: string;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  dir = await mkdtemp(join(tmpdir(), 'spool-era-questions-'));
});
afterAll(async () => {
  await fake.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The environment of a `spool chat` whose one MCP server is `server`. */
async function envWith(server: keyof typeof SERVERS): Promise<Record<string, string>> {
  const config = join(dir, `${server}.json`);
  await writeFile(config, JSON.stringify({ mcpServers: { [server]: SERVERS[server] } }));
  return { OPENAI_BASE_URL: fake.baseURL, DATABASE_URL: fileDatabaseUrl(), MCP_CONFIG: config };
}

/** The model calls `tool` once, then says what it returned. */
function callsOnce(tool: string, args: Record<string, unknown> = {}): void {
  fake.fallback = (request) =>
    request.messages.at(-1)!.role === 'tool'
      ? { content: `tool said: ${request.messages.at(-1)!.content}` }
      : { toolCalls: [{ id: 'ask', name: tool, arguments: JSON.stringify(args) }] };
}

describe('a 2026-07-28 server asking in its result (input_required), on a terminal', () => {
  it('puts the form to the person, and retries the call with their answer and the requestState', async () => {
    callsOnce('modern__sign_up');
    const tty = onTerminal(
      ['chat', '--session', `mrtr-form-${Date.now()}`],
      await envWith('modern'),
    );
    try {
      await tty.waitFor('you › ');
      tty.type('sign me up\r');
      await tty.waitFor('Fill it in? [y = yes, n = decline, c = cancel] ');
      expect(tty.screen()).toContain('modern asks: Who is signing up?');
      tty.type('y\r');
      await tty.waitFor('Name (required): ');
      tty.type('Ada\r');
      await tty.waitFor(
        'tool said: got {"action":"accept","content":{"name":"Ada"}} with state asked on stdio',
      );
      tty.type('\x03');
      expect(await tty.exited).toBe(0);
    } finally {
      fake.fallback = undefined;
      await tty.end();
    }
  });
});

describe('a page to open (URL elicitation), on a terminal', () => {
  it("shows a 2026-07-28 server's page by its host and address, never to the model, and retries the call once the person said yes", async () => {
    callsOnce('modern__open_page');
    const tty = onTerminal(
      ['chat', '--session', `mrtr-url-${Date.now()}`],
      await envWith('modern'),
    );
    try {
      await tty.waitFor('you › ');
      tty.type('sign it\r');
      await tty.waitFor('Open it? [y = yes, n = decline, c = cancel] ');
      expect(tty.screen()).toContain(
        'modern asks you to open a page on sign.example.com: Sign the agreement there.',
      );
      expect(tty.screen()).toContain('https://sign.example.com/agreement?ref=spool');
      tty.type('y\r');
      await tty.waitFor('tool said: page {"action":"accept"} with state page on stdio');
      tty.type('\x03');
      expect(await tty.exited).toBe(0);
      expect(JSON.stringify(fake.requests)).not.toContain('sign.example.com');
    } finally {
      fake.fallback = undefined;
      await tty.end();
    }
  });

  it("answers a 2025 server's elicitation/create in URL mode with the person's consent", async () => {
    const url = 'https://login.example.org/consent';
    callsOnce('everything__trigger-url-elicitation', { url, message: 'Grant access there.' });
    const tty = onTerminal(
      ['chat', '--session', `url-2025-${Date.now()}`],
      await envWith('everything'),
    );
    try {
      await tty.waitFor('you › ');
      tty.type('grant it\r');
      await tty.waitFor('Open it? [y = yes, n = decline, c = cancel] ');
      expect(tty.screen()).toContain(
        'everything asks you to open a page on login.example.org: Grant access there.',
      );
      tty.type('y\r');
      await tty.waitFor('tool said: ✅ User completed the URL elicitation flow.');
      tty.type('\x03');
      expect(await tty.exited).toBe(0);
    } finally {
      fake.fallback = undefined;
      await tty.end();
    }
  });

  it('keeps a 2025 call going while the person is on the page, past its timeout, until the server says the page is done', async () => {
    callsOnce('asker__open_page', { waitMs: 2500 });
    const tty = onTerminal(['chat', '--session', `url-wait-${Date.now()}`], await envWith('asker'));
    try {
      await tty.waitFor('you › ');
      tty.type('pay\r');
      await tty.waitFor('Open it? [y = yes, n = decline, c = cancel] ');
      expect(tty.screen()).toContain(
        'asker asks you to open a page on pay.example.com: Pay there.',
      );
      tty.type('y\r');
      await tty.waitFor('tool said: page accept');
      tty.type('\x03');
      expect(await tty.exited).toBe(0);
    } finally {
      fake.fallback = undefined;
      await tty.end();
    }
  });

  it('waits for a page the server never says is done no longer than the call may run in all, then cancels the call', async () => {
    callsOnce('stuck__open_page', { waitMs: 600_000 });
    const tty = onTerminal(
      ['chat', '--session', `url-stuck-${Date.now()}`],
      await envWith('stuck'),
    );
    try {
      await tty.waitFor('you › ');
      tty.type('pay\r');
      await tty.waitFor('Open it? [y = yes, n = decline, c = cancel] ');
      tty.type('y\r');
      await tty.waitFor(
        'tool said: {"error":"open_page on MCP server \\"stuck\\" did not finish within 1 s of its last word (or 2 s in all) and was cancelled."}',
      );
      tty.type('\x03');
      expect(await tty.exited).toBe(0);
    } finally {
      fake.fallback = undefined;
      await tty.end();
    }
  });
});

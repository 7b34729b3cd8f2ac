import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/database.ts';
import { SealedOAuthVault } from '../../../src/store/credentials/oauth-vault.ts';
import { parseMcpConfig } from '../../../src/tools/mcp/config/config.ts';
import { McpToolSource } from '../../../src/tools/mcp/source.ts';
import { testDatabase } from '../../support/db.ts';
import { RecordingLogger } from '../../support/logger.ts';
import { freePort } from '../../support/process.ts';

const TICKETS = join(import.meta.dirname, '../../fixtures/ticket-mcp-server.mjs');

let db: Database;
beforeAll(async () => {
  db = await testDatabase();
});
afterAll(() => db.close());

describe('an MCP_OAUTH_KEY that does not open a stored record', () => {
  it('disables only the server whose record it is, by name; the others start', async () => {
    const stamp = Date.now();
    const [locked, opens, tickets] = [`locked${stamp}`, `opens${stamp}`, `tickets${stamp}`];
    // Nothing listens at these: the servers that start keep trying, which is not under test.
    const url = (name: string) => `http://127.0.0.1:${port}/${name}`;
    const port = await freePort();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    await new SealedOAuthVault(db.prisma, oldKey).write(locked, { serverUrl: url(locked) });
    await new SealedOAuthVault(db.prisma, newKey).write(opens, { serverUrl: url(opens) });
    const config = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          [tickets]: { command: process.execPath, args: [TICKETS] },
          [locked]: { url: url(locked) },
          [opens]: { url: url(opens) },
        },
      }),
      join(tmpdir(), 'mcp.json'),
      process.env,
      new Set(),
    );
    expect(config.problems).toEqual([]);
    const logger = new RecordingLogger();
    const source = await McpToolSource.start(
      config,
      logger,
      { maxMessageBytes: 10_485_760, binaryMaxBytes: 1_000_000 },
      {
        vault: new SealedOAuthVault(db.prisma, newKey),
        identity: { redirectUrl: 'http://127.0.0.1/callback' },
      },
    );
    try {
      // The stdio server, which needs no token, serves its tools.
      expect(source.tools().map((t) => t.spec.server)).toContain(tickets);
      const disabled = `MCP server "${locked}": an OAuth record does not open with MCP_OAUTH_KEY (was the key changed?); disabled`;
      expect(source.problems()).toContain(disabled);
      // The one whose record opens under the new key is not: only unreachable here.
      expect(source.problems().filter((p) => p.endsWith('; disabled'))).toEqual([disabled]);
      expect(logger.lines).toContainEqual({
        level: 'error',
        message: disabled,
        fields: { server: locked },
      });
    } finally {
      await source.close();
    }
  });
});

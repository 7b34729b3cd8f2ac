import type { Config } from './config.ts';
import type { Logger } from './core/logger.ts';
import { errorMessage } from './core/errors.ts';
import { openDatabase } from './store/database.ts';
import { SealedOAuthVault } from './store/credentials/oauth-vault.ts';
import type { McpConfig } from './tools/mcp/config/config.ts';
import { USAGE } from './startup-settings.ts';

/**
 * `mcp login SERVER`: an operator logs Spool in once; the tokens go to the database, sealed, for
 * every replica and later start (a running bot picks them up within 30 s).
 */
export async function runMcpLogin(
  args: string[],
  config: Config,
  mcp: McpConfig | undefined,
  logger: Logger,
): Promise<number> {
  const [verb, name] = args;
  if (verb !== 'login' || !name || args.length > 2) {
    process.stderr.write(USAGE);
    return 2;
  }
  const server = mcp?.servers.find((s) => s.name === name);
  if (server?.kind !== 'http' || server.oauth?.grant !== 'authorization_code') {
    process.stderr.write(
      `${config.tools.mcpConfigPath ?? 'mcp.json'} has no HTTP server "${name}" an operator logs in to.\n`,
    );
    return 2;
  }
  if (!config.tools.oauth.key) {
    process.stderr.write('Set MCP_OAUTH_KEY first: Spool keeps OAuth tokens only encrypted.\n');
    return 2;
  }
  const [{ login, terminalOperator }, { CLIENT_INFO }] = await Promise.all([
    import('./tools/mcp/sign-in/login.ts'),
    import('./tools/mcp/source.ts'),
  ]);
  const db = await openDatabase({ ...config.store, logger });
  try {
    const vault = new SealedOAuthVault(db.prisma, config.tools.oauth.key);
    const operator = terminalOperator(
      config.tools.oauth.redirectUrl,
      process.stdin,
      process.stdout,
    );
    const outcome = await login(
      { ...server, oauth: server.oauth },
      vault,
      config.tools.oauth,
      operator,
      CLIENT_INFO,
    );
    process.stdout.write(
      outcome === 'already'
        ? `Spool can already use "${name}".\n`
        : `Logged in to "${name}". A running Spool uses it within 30 seconds.\n`,
    );
    return 0;
  } catch (error) {
    process.stderr.write(`Could not log in to "${name}": ${errorMessage(error)}\n`);
    return 1;
  } finally {
    await db.close();
  }
}

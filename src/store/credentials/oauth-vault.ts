import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { OAuthRecord, OAuthVault } from '../../tools/mcp/sign-in/oauth.ts';
import type { PrismaClient } from '../generated/client.ts';

const VERSION = 'v1';

/**
 * MCP servers' OAuth records in the database, sealed with AES-256-GCM under MCP_OAUTH_KEY. The
 * server's name is the additional data: a record copied to another server's row does not open.
 */
export class SealedOAuthVault implements OAuthVault {
  constructor(
    private readonly prisma: PrismaClient,
    /** 32 bytes; undefined when MCP_OAUTH_KEY is not set, and nothing can be kept. */
    private readonly key: Buffer | undefined,
  ) {}

  async read(server: string): Promise<OAuthRecord | undefined> {
    const row = await this.prisma.mcpOAuth.findUnique({ where: { server } });
    if (!row || !this.key) return undefined;
    return JSON.parse(open(row.sealed, this.key, server)) as OAuthRecord;
  }

  async write(server: string, record: OAuthRecord): Promise<void> {
    if (!this.key)
      throw new Error(
        'MCP_OAUTH_KEY is not set: Spool keeps OAuth tokens only encrypted (openssl rand -base64 32)',
      );
    const sealed = seal(JSON.stringify(record), this.key, server);
    await this.prisma.mcpOAuth.upsert({
      where: { server },
      create: { server, sealed },
      update: { sealed, updatedAt: new Date() },
    });
  }
}

export function seal(plain: string, key: Buffer, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const parts = [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64'));
  return [VERSION, ...parts].join('.');
}

export function open(sealed: string, key: Buffer, context: string): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || body === undefined)
    throw new Error('an OAuth record in the database is not sealed the way Spool seals them');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'))
    .setAAD(Buffer.from(context))
    .setAuthTag(Buffer.from(tag, 'base64'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    throw new Error('an OAuth record does not open with MCP_OAUTH_KEY (was the key changed?)');
  }
}

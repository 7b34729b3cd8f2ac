import type { Person, SignInListing } from '../../core/ports/parked/sign-ins.ts';
import type {
  PendingSignIn,
  PersonRecord,
  PersonVault,
} from '../../tools/mcp/sign-in/person-oauth.ts';
import type { McpSignIn, PrismaClient } from '../generated/client.ts';
import { open, seal } from './oauth-vault.ts';

/** What a sealed sign-in row holds besides its columns. */
interface SealedSignIn {
  codeVerifier: string;
  record: PersonRecord;
  authorizationUrl: string;
}

const recordContext = (server: string, p: Person) =>
  JSON.stringify(['person', server, p.platform, p.workspace, p.user]);
const signInContext = (s: Pick<PendingSignIn, 'state' | 'server' | 'person' | 'toolCallId'>) =>
  JSON.stringify([
    'sign-in',
    s.state,
    s.server,
    s.person.platform,
    s.person.workspace,
    s.person.user,
    s.toolCallId ?? null,
  ]);

/**
 * People's sign-ins to MCP servers, and the links sent to them, sealed with AES-256-GCM under
 * MCP_OAUTH_KEY. The server and the person are the additional data: a record copied to another
 * person's row does not open, nor a link's secrets moved to another person or call.
 */
export class SealedPersonVault implements PersonVault {
  constructor(
    private readonly prisma: PrismaClient,
    /** 32 bytes; undefined when MCP_OAUTH_KEY is not set, and nothing can be kept. */
    private readonly key: Buffer | undefined,
  ) {}

  async read(server: string, person: Person): Promise<PersonRecord | undefined> {
    const row = await this.prisma.mcpPersonOAuth.findUnique({
      where: { server_platform_workspace_userId: idOf(server, person) },
    });
    if (!row || !this.key) return undefined;
    return JSON.parse(open(row.sealed, this.key, recordContext(server, person))) as PersonRecord;
  }

  async write(server: string, person: Person, record: PersonRecord, issuer?: string) {
    const sealed = seal(JSON.stringify(record), this.needKey(), recordContext(server, person));
    const id = idOf(server, person);
    await this.prisma.mcpPersonOAuth.upsert({
      where: { server_platform_workspace_userId: id },
      create: { ...id, issuer: issuer ?? null, sealed },
      update: { issuer: issuer ?? null, sealed, updatedAt: new Date() },
    });
  }

  async latest(server: string) {
    const row = await this.prisma.mcpPersonOAuth.findFirst({
      where: { server },
      orderBy: { updatedAt: 'desc' },
    });
    if (!row || !this.key) return undefined;
    const person = { platform: row.platform, workspace: row.workspace, user: row.userId };
    const record = JSON.parse(
      open(row.sealed, this.key, recordContext(server, person)),
    ) as PersonRecord;
    return { person, record };
  }

  async remove(server: string, person: Person): Promise<boolean> {
    const { count } = await this.prisma.mcpPersonOAuth.deleteMany({ where: idOf(server, person) });
    return count > 0;
  }

  async list(where: { platform: string; workspace: string; user?: string }) {
    const rows = await this.prisma.mcpPersonOAuth.findMany({
      where: {
        platform: where.platform,
        workspace: where.workspace,
        ...(where.user === undefined ? {} : { userId: where.user }),
      },
      orderBy: [{ server: 'asc' }, { userId: 'asc' }],
    });
    return rows.map((row): SignInListing => ({
      server: row.server,
      user: row.userId,
      updatedAt: row.updatedAt,
    }));
  }

  async pend(signIn: PendingSignIn): Promise<void> {
    const { codeVerifier, record, authorizationUrl } = signIn;
    const secrets: SealedSignIn = { codeVerifier, record, authorizationUrl };
    await this.prisma.mcpSignIn.create({
      data: {
        state: signIn.state,
        server: signIn.server,
        platform: signIn.person.platform,
        workspace: signIn.person.workspace,
        userId: signIn.person.user,
        toolCallId: signIn.toolCallId ?? null,
        sealed: seal(JSON.stringify(secrets), this.needKey(), signInContext(signIn)),
        expiresAt: signIn.expiresAt,
      },
    });
    // Links nobody followed are of no use once expired.
    await this.prisma.mcpSignIn.deleteMany({ where: { expiresAt: { lt: new Date() } } });
  }

  async peek(state: string): Promise<PendingSignIn | undefined> {
    if (!this.key) return undefined;
    const row = await this.prisma.mcpSignIn.findFirst({
      where: { state, usedAt: null, expiresAt: { gt: new Date() } },
    });
    return row ? this.opened(row, this.key) : undefined;
  }

  async claim(state: string): Promise<PendingSignIn | undefined> {
    if (!this.key) return undefined;
    // One UPDATE decides: of two redirects with one state (two replicas, a reload), one claims it.
    const [row] = await this.prisma.mcpSignIn.updateManyAndReturn({
      where: { state, usedAt: null, expiresAt: { gt: new Date() } },
      data: { usedAt: new Date() },
    });
    return row ? this.opened(row, this.key) : undefined;
  }

  private opened(row: McpSignIn, key: Buffer): PendingSignIn {
    const link = {
      state: row.state,
      server: row.server,
      person: { platform: row.platform, workspace: row.workspace, user: row.userId },
      ...(row.toolCallId === null ? {} : { toolCallId: row.toolCallId }),
      expiresAt: row.expiresAt,
    };
    const secrets = JSON.parse(open(row.sealed, key, signInContext(link))) as SealedSignIn;
    return { ...link, ...secrets };
  }

  private needKey(): Buffer {
    if (!this.key)
      throw new Error(
        'MCP_OAUTH_KEY is not set: Spool keeps OAuth tokens only encrypted (openssl rand -base64 32)',
      );
    return this.key;
  }
}

function idOf(server: string, person: Person) {
  return {
    server,
    platform: person.platform,
    workspace: person.workspace,
    userId: person.user,
  };
}

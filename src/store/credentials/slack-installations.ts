import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import type { PrismaClient } from '../generated/client.ts';
import { open, seal } from './oauth-vault.ts';

/** A rotating bot token's new pair, as Slack's `oauth.v2.access` gives it. */
export interface RefreshedToken {
  accessToken: string;
  refreshToken: string;
  /** Seconds from now. */
  expiresIn: number;
}

export interface SlackInstallationsOptions {
  /** 32 bytes (MCP_OAUTH_KEY): installations are kept only sealed. */
  key: Buffer;
  /** Spends a refresh token at Slack; called under the installation's row lock, once per token. */
  refresh(refreshToken: string): Promise<RefreshedToken>;
  /** A rotating token is refreshed once it has less than this left (default 30 minutes). */
  refreshAheadMs?: number;
  /** A refresh that failed while the token still worked; the token goes on being used. */
  onRefreshFailed?(id: string, error: unknown): void;
}

/** No installation for the workspace an event or a post is for (never installed, or uninstalled). */
export class NotInstalledError extends Error {
  override readonly name = 'NotInstalledError';
  static readonly CODE = 'slack_not_installed';
  readonly code = NotInstalledError.CODE;
}

/** The row an installation lives in: its organization's for an org-wide install, else its workspace's. */
export function installationId(query: {
  teamId?: string;
  enterpriseId?: string;
  isEnterpriseInstall?: boolean;
}): string {
  if (query.isEnterpriseInstall && query.enterpriseId) return `enterprise:${query.enterpriseId}`;
  if (!query.teamId) throw new NotInstalledError('Slack named no workspace to look up');
  return `team:${query.teamId}`;
}

type Row = { sealed: string; expires_at: Date | null };

/**
 * Bolt's installation store in PostgreSQL: each installation sealed (AES-256-GCM, its row's id as
 * additional data, as MCP tokens are), keyed by workspace or, for an org-wide install, by
 * organization. A rotating token is refreshed here, not by Bolt: under the row's lock
 * (`SELECT … FOR UPDATE`), the new pair written in the same transaction, so that of all replicas
 * one spends the refresh token and the others read what it got. What Bolt is handed carries no
 * refresh token, so it never refreshes on its own.
 */
export class SlackInstallations implements InstallationStore {
  private readonly refreshAheadMs: number;
  /** Workspaces already recorded under their organization, by this process. */
  private readonly teamsSeen = new Set<string>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly options: SlackInstallationsOptions,
  ) {
    this.refreshAheadMs = options.refreshAheadMs ?? 30 * 60_000;
  }

  async storeInstallation(installation: Installation): Promise<void> {
    const id = installationId({
      teamId: installation.team?.id,
      enterpriseId: installation.enterprise?.id,
      isEnterpriseInstall: installation.isEnterpriseInstall,
    });
    const columns = {
      enterpriseId: installation.enterprise?.id ?? null,
      teamId: installation.isEnterpriseInstall ? null : (installation.team?.id ?? null),
      sealed: this.seal(id, installation),
      expiresAt: expiryOf(installation),
      updatedAt: new Date(),
    };
    await this.prisma.slackInstallation.upsert({
      where: { id },
      create: { id, ...columns },
      update: columns,
    });
  }

  async fetchInstallation(query: InstallationQuery<boolean>): Promise<Installation> {
    const id = installationId(query);
    if (query.isEnterpriseInstall && query.teamId && query.enterpriseId)
      await this.recordTeam(query.teamId, query.enterpriseId);
    const found = await this.read(id);
    if (!found) throw new NotInstalledError(`Spool is not installed in Slack ${id}`);
    return forBolt(found);
  }

  async deleteInstallation(query: InstallationQuery<boolean>): Promise<void> {
    await this.prisma.slackInstallation.deleteMany({ where: { id: installationId(query) } });
  }

  /**
   * The workspaces an installation serves: its own, or, for an org-wide install, every workspace of
   * the organization an event has come from (those whose turns and schedules it carries).
   */
  async workspacesOf(query: InstallationQuery<boolean>): Promise<string[]> {
    if (!query.isEnterpriseInstall || !query.enterpriseId)
      return query.teamId ? [query.teamId] : [];
    const teams = await this.prisma.slackTeam.findMany({
      where: { enterpriseId: query.enterpriseId },
      select: { teamId: true },
    });
    return [...new Set([...(query.teamId ? [query.teamId] : []), ...teams.map((t) => t.teamId)])];
  }

  /**
   * The installation a workspace's background posts use: its own, or its organization's (an
   * org-wide install, once an event from the workspace was seen).
   */
  async forWorkspace(teamId: string): Promise<Installation> {
    const own = await this.read(`team:${teamId}`);
    if (own) return forBolt(own);
    const team = await this.prisma.slackTeam.findUnique({ where: { teamId } });
    const org = team && (await this.read(`enterprise:${team.enterpriseId}`));
    if (!org) throw new NotInstalledError(`Spool is not installed in Slack workspace ${teamId}`);
    return forBolt(org);
  }

  /** The installation, its token refreshed first when it is due. */
  private async read(id: string): Promise<Installation | undefined> {
    const row = await this.prisma.slackInstallation.findUnique({ where: { id } });
    if (!row) return undefined;
    if (!this.due(row.expiresAt)) return this.open(id, row.sealed);
    try {
      return await this.rotate(id);
    } catch (error) {
      // Slack refused, or did not answer: the token still works until it expires.
      this.options.onRefreshFailed?.(id, error);
      if (row.expiresAt && row.expiresAt.getTime() > Date.now()) return this.open(id, row.sealed);
      throw error;
    }
  }

  /**
   * One refresh across replicas: the row locked, read again (a replica that waited finds the pair
   * the first one got, and spends nothing), refreshed only if still due, written before the lock
   * is let go.
   */
  private rotate(id: string): Promise<Installation | undefined> {
    return this.prisma.$transaction(
      async (tx) => {
        const [row] = await tx.$queryRaw<Row[]>`
          SELECT sealed, expires_at FROM slack_installation WHERE id = ${id} FOR UPDATE`;
        if (!row) return undefined;
        const installation = this.open(id, row.sealed);
        if (!this.due(row.expires_at) || !installation.bot?.refreshToken) return installation;
        const fresh = await this.options.refresh(installation.bot.refreshToken);
        const bot = {
          ...installation.bot,
          token: fresh.accessToken,
          refreshToken: fresh.refreshToken,
          expiresAt: Math.floor(Date.now() / 1000) + fresh.expiresIn,
        };
        const renewed: Installation = { ...installation, bot };
        await tx.slackInstallation.update({
          where: { id },
          data: {
            sealed: this.seal(id, renewed),
            expiresAt: expiryOf(renewed),
            updatedAt: new Date(),
          },
        });
        return renewed;
      },
      // Slack's answer is awaited with the lock held: others wait for it rather than spend.
      { maxWait: 30_000, timeout: 30_000 },
    );
  }

  private due(expiresAt: Date | null): boolean {
    return expiresAt !== null && expiresAt.getTime() - Date.now() < this.refreshAheadMs;
  }

  private async recordTeam(teamId: string, enterpriseId: string): Promise<void> {
    if (this.teamsSeen.has(teamId)) return;
    await this.prisma.slackTeam.upsert({
      where: { teamId },
      create: { teamId, enterpriseId },
      update: { enterpriseId },
    });
    this.teamsSeen.add(teamId);
  }

  private seal(id: string, installation: Installation): string {
    return seal(JSON.stringify(installation), this.options.key, context(id));
  }

  private open(id: string, sealed: string): Installation {
    return JSON.parse(open(sealed, this.options.key, context(id))) as Installation;
  }
}

const context = (id: string) => JSON.stringify(['slack-installation', id]);

const expiryOf = (installation: Installation): Date | null =>
  installation.bot?.expiresAt ? new Date(installation.bot.expiresAt * 1000) : null;

/** Without its refresh token and expiry: Bolt's `authorize` would refresh it on its own. */
function forBolt(installation: Installation): Installation {
  if (!installation.bot?.refreshToken) return installation;
  const bot = { ...installation.bot };
  delete bot.refreshToken;
  delete bot.expiresAt;
  return { ...installation, bot };
}

import type { WebSession, WebSessionPort } from '../../core/ports/web/web-sessions.ts';
import type { PrismaClient } from '../generated/client.ts';

type Row = {
  id: string;
  platform: string;
  workspace: string;
  userId: string;
  csrf: string;
  createdAt: Date;
  expiresAt: Date;
};

const sessionOf = (r: Row): WebSession => ({
  id: r.id,
  person: { platform: r.platform, workspace: r.workspace, user: r.userId },
  csrf: r.csrf,
  createdAt: r.createdAt,
  expiresAt: r.expiresAt,
});

/** The web pages' sessions, in `web_sessions`; an expired one is as none and is deleted. */
export class WebSessionLedger implements WebSessionPort {
  constructor(private readonly prisma: PrismaClient) {}

  async create({ id, person, csrf, expiresAt }: Omit<WebSession, 'createdAt'>): Promise<void> {
    const { platform, workspace, user: userId } = person;
    await this.prisma.webSession.create({
      data: { id, platform, workspace, userId, csrf, expiresAt },
    });
    // Sessions left to expire go as new ones come.
    await this.prisma.webSession.deleteMany({ where: { expiresAt: { lt: new Date() } } });
  }

  async find(id: string): Promise<WebSession | undefined> {
    const row = await this.prisma.webSession.findFirst({
      where: { id, expiresAt: { gt: new Date() } },
    });
    return row ? sessionOf(row) : undefined;
  }

  async list(where: { platform: string; workspace: string; user?: string }): Promise<WebSession[]> {
    const rows = await this.prisma.webSession.findMany({
      where: {
        platform: where.platform,
        workspace: where.workspace,
        ...(where.user ? { userId: where.user } : {}),
        expiresAt: { gt: new Date() },
      },
      orderBy: { createdAt: 'desc' },
    });
    return rows.map(sessionOf);
  }

  async remove(id: string, where: { platform: string; workspace: string }): Promise<boolean> {
    const { platform, workspace } = where;
    const { count } = await this.prisma.webSession.deleteMany({
      where: { id, platform, workspace },
    });
    return count > 0;
  }
}

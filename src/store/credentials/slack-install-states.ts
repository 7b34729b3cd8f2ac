import { randomBytes } from 'node:crypto';
import { InvalidStateError, type InstallURLOptions, type StateStore } from '@slack/oauth';
import type { PrismaClient } from '../generated/client.ts';

/**
 * The `state` of "Add to Slack" links, for Bolt's InstallProvider: a random value in a row of its
 * own, good once (the redirect claims it with a conditional UPDATE) and only for `lifetimeMs`. A
 * replayed or forged redirect finds no row to claim, on any replica.
 */
export class SlackInstallStates implements StateStore {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly lifetimeMs = 10 * 60_000,
  ) {}

  async generateStateParam(installOptions: InstallURLOptions, now: Date): Promise<string> {
    const state = randomBytes(24).toString('base64url');
    await this.prisma.slackInstallState.create({
      data: {
        state,
        installOptions: JSON.parse(JSON.stringify(installOptions)) as object,
        createdAt: now,
        expiresAt: new Date(now.getTime() + this.lifetimeMs),
      },
    });
    return state;
  }

  async verifyStateParam(now: Date, state: string): Promise<InstallURLOptions> {
    const { count } = await this.prisma.slackInstallState.updateMany({
      where: { state, usedAt: null, expiresAt: { gt: now } },
      data: { usedAt: now },
    });
    if (count === 0)
      throw new InvalidStateError('The install link is unknown, used already, or expired');
    const row = await this.prisma.slackInstallState.findUniqueOrThrow({ where: { state } });
    return row.installOptions as unknown as InstallURLOptions;
  }

  /** Links past their lifetime: nothing can use them any more. */
  async prune(now = new Date()): Promise<number> {
    const { count } = await this.prisma.slackInstallState.deleteMany({
      where: { expiresAt: { lt: now } },
    });
    return count;
  }
}

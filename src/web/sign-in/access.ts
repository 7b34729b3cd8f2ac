import type { ChannelAccess, Workspace } from '../../core/ports/platform/channel-access.ts';
import type { ChannelScope } from '../../core/ports/conversation.ts';
import type { Viewer } from '../layout.ts';

/** How long the platform's word on a person and a channel is kept before it is asked again. */
const ANSWER_MS = 60_000;
/** Past this many answers kept, they are all asked for again. */
const ANSWERS_KEPT = 10_000;

/** The platform's answers, each kept a minute, at most ANSWERS_KEPT of them. */
class Answers<T> {
  private readonly kept = new Map<string, { value: T; until: number }>();

  async get(key: string, ask: () => Promise<T>): Promise<T> {
    const known = this.kept.get(key);
    if (known && known.until > Date.now()) return known.value;
    const value = await ask();
    if (this.kept.size >= ANSWERS_KEPT) this.kept.clear();
    this.kept.set(key, { value, until: Date.now() + ANSWER_MS });
    return value;
  }
}

/**
 * Who sees what: an admin (the policy's `admins`) sees their workspace; anyone else a channel's
 * records only while the platform lets them read it (a direct message only its own person, its one
 * member besides the bot); nobody another workspace's or platform's. A Discord sign-in names no
 * server (a Discord user is the same in every one): its workspace is '', each server's channels are
 * asked about, and an admin's workspaces are the servers the platform says they are a member of.
 */
export class Access {
  private readonly readableAnswers = new Answers<boolean>();
  private readonly workspaceAnswers = new Answers<Workspace[]>();

  constructor(private readonly platforms: ReadonlyMap<string, ChannelAccess>) {}

  async mayRead(viewer: Viewer, channel: ChannelScope): Promise<boolean> {
    if (channel.platform !== viewer.platform) return false;
    if (viewer.workspace !== '' && channel.workspace !== viewer.workspace) return false;
    if (viewer.admin && (await this.workspaces(viewer)).some((w) => w.id === channel.workspace))
      return true;
    const platform = this.platforms.get(channel.platform);
    if (!platform) return false;
    const key = JSON.stringify([viewer.user, channel.platform, channel.workspace, channel.channel]);
    return this.readableAnswers.get(key, () =>
      platform.canRead(viewer.user, channel).catch(() => false),
    );
  }

  /** Of `channels`, those the viewer may read. */
  async readable(viewer: Viewer, channels: ChannelScope[]): Promise<ChannelScope[]> {
    const allowed = await Promise.all(channels.map((c) => this.mayRead(viewer, c)));
    return channels.filter((_, i) => allowed[i]);
  }

  /** Where the viewer's platform records direct messages outside its workspaces, if it does. */
  directMessages(viewer: Viewer): string | undefined {
    return this.platforms.get(viewer.platform)?.directMessages;
  }

  /**
   * The workspaces that are the viewer's: their sign-in's; for a sign-in that names none
   * (Discord's), those of Spool's the platform says they are a member of now.
   */
  async workspaces(viewer: Viewer): Promise<Workspace[]> {
    if (viewer.workspace !== '') return [{ id: viewer.workspace }];
    const ask = this.platforms.get(viewer.platform)?.workspacesOf;
    if (!ask) return [];
    const key = JSON.stringify([viewer.user, viewer.platform]);
    return this.workspaceAnswers.get(key, () => ask(viewer.user).catch(() => []));
  }
}

import type { ChannelAccess } from '../../core/ports/platform/channel-access.ts';
import type { ChannelScope } from '../../core/ports/conversation.ts';
import type { Viewer } from '../layout.ts';

/** How long the platform's word on a person and a channel is kept before it is asked again. */
const ANSWER_MS = 60_000;

/**
 * Who sees what: an admin (the policy's `admins`) sees their workspace; anyone else a channel's
 * records only while the platform lets them read it (a direct message only its own person, its one
 * member besides the bot); nobody another workspace's or platform's. A Discord sign-in names no
 * server (a Discord user is the same in every one): its workspace is '', and each server's
 * channels are asked about.
 */
export class Access {
  private readonly answers = new Map<string, { readable: boolean; until: number }>();

  constructor(private readonly platforms: ReadonlyMap<string, ChannelAccess>) {}

  async mayRead(viewer: Viewer, channel: ChannelScope): Promise<boolean> {
    if (channel.platform !== viewer.platform) return false;
    if (viewer.workspace !== '' && channel.workspace !== viewer.workspace) return false;
    if (viewer.admin) return true;
    const platform = this.platforms.get(channel.platform);
    if (!platform) return false;
    const key = JSON.stringify([viewer.user, channel.platform, channel.workspace, channel.channel]);
    const known = this.answers.get(key);
    if (known && known.until > Date.now()) return known.readable;
    const readable = await platform.canRead(viewer.user, channel).catch(() => false);
    // Bounded: past this many, the answers are asked for again.
    if (this.answers.size >= 10_000) this.answers.clear();
    this.answers.set(key, { readable, until: Date.now() + ANSWER_MS });
    return readable;
  }

  /** Of `channels`, those the viewer may read. */
  async readable(viewer: Viewer, channels: ChannelScope[]): Promise<ChannelScope[]> {
    const allowed = await Promise.all(channels.map((c) => this.mayRead(viewer, c)));
    return channels.filter((_, i) => allowed[i]);
  }
}

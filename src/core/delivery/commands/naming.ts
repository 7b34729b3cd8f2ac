import type { Naming } from '../../ports/spend.ts';

/** Mentions, as Slack and Discord both write them: `<#C1>` shows a channel, `<@U1>` a person. */
const MENTIONS: Naming = { channel: (id) => `<#${id}>`, person: (id) => `<@${id}>` };
/** Where nothing renders a mention (the console), ids as they are. */
const IDS: Naming = { channel: (id) => id, person: (id) => id };

/** Channels and people as `platform` shows them in text Spool writes (a usage report). */
export const namingFor = (platform: string): Naming => (platform === 'console' ? IDS : MENTIONS);

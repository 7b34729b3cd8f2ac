import type { ChannelScope, Conversation, ConversationKey, HistorySearchPort } from '../../core/types.ts';

/** What platform adapters need of the store beyond the agent's own port. */
export interface AdapterStore extends HistorySearchPort {
  openConversation(key: ConversationKey): Promise<Conversation>;
  findConversation(key: ConversationKey): Promise<Conversation | undefined>;
  latestConversation(scope: ChannelScope): Promise<Conversation | undefined>;
  /** True for the first caller only: that caller answers the delivery. */
  claimEvent(platform: string, eventId: string): Promise<boolean>;
}

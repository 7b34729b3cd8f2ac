import type { Person } from '../parked/sign-ins.ts';

/** A browser signed in to Spool's web pages (src/web/). */
export interface WebSession {
  /** The SHA-256 (hex) of the cookie's token: what the store keys it by. */
  id: string;
  person: Person;
  /** The token every form of this session carries back. */
  csrf: string;
  createdAt: Date;
  expiresAt: Date;
}

/** Where web sessions are kept (src/store/credentials/web-session-ledger.ts). */
export interface WebSessionPort {
  create(session: Omit<WebSession, 'createdAt'>): Promise<void>;
  /** The session, while it has not expired. */
  find(id: string): Promise<WebSession | undefined>;
  /** A workspace's live sessions: one person's, or everyone's when `user` is not given. */
  list(where: { platform: string; workspace: string; user?: string }): Promise<WebSession[]>;
  /** Ends a session of the workspace; false when there was none. */
  remove(id: string, where: { platform: string; workspace: string }): Promise<boolean>;
}

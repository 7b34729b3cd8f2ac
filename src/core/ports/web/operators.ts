import type { Schedule } from '../schedules.ts';

/** One workspace of one platform: every operator's view is of one. */
export interface WorkspaceScope {
  platform: string;
  workspace: string;
}

/** A run of a schedule: its tick's inbox row. */
export interface ScheduleRun {
  tick: Date;
  /** pending, answered, refused or failed. */
  status: string;
  answeredAt?: Date;
}

/** A lane a replica holds the lease of now. */
export interface HeldLane {
  holder: string;
  channel: string;
  thread: string;
  leaseExpiresAt: Date;
  /** The fencing token of the holder's writes. */
  generation: string;
}

/** A model request's hold on the spend caps, while it runs. */
export interface HeldSpend {
  channel: string;
  user: string;
  tokens: number;
  /** Unknown where the model's price is. */
  cost?: number;
  expiresAt: Date;
}

/** What the operator pages read of a workspace (src/store/transcripts/web-operators.ts). */
export interface OperatorRecordsPort {
  /** The workspace's schedules (of one owner, when given), oldest first, each with its last runs. */
  schedules(
    scope: WorkspaceScope & { owner?: string },
    runs: number,
  ): Promise<Array<{ schedule: Schedule; runs: ScheduleRun[] }>>;
  /** The workspace's lanes whose lease is held now. */
  heldLanes(scope: WorkspaceScope): Promise<HeldLane[]>;
  /** The workspace's messages waiting for their turn, and when the oldest came in. */
  inbox(scope: WorkspaceScope): Promise<{ pending: number; oldest?: Date }>;
  /** The holds on the spend caps in flight now (of one person, when given). */
  holds(scope: WorkspaceScope & { user?: string }): Promise<HeldSpend[]>;
}

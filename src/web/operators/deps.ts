import type { OperatorRecordsPort, WorkspaceScope } from '../../core/ports/web/operators.ts';
import type { SpendLedger } from '../../core/ports/spend.ts';
import type { SpendPolicy } from '../../core/delivery/rules/spend.ts';
import type {
  Cancellation,
  ScheduleCanceller,
} from '../../core/delivery/schedules/schedule-desk.ts';
import type { McpServerHealth } from '../../tools/mcp/source.ts';
import type { Viewer } from '../layout.ts';

/** What the operator pages read and do (src/web/operators/). */
export interface OperatorDeps {
  records: OperatorRecordsPort;
  /** The usage `/usage` reads. */
  spend: Pick<SpendLedger, 'usage'>;
  /** The prices' currency, the caps and the admins, from the policy file. */
  policy?: SpendPolicy;
  /** `schedule cancel`'s cancellation; undefined where schedules do not run. */
  cancelSchedule(who: ScheduleCanceller, id: string): Promise<Cancellation | undefined>;
  /** This replica's name, as its leases name it. */
  replica: string;
  /** What /readyz knows: the parts not ready, and each MCP server. */
  notReady(): Promise<string[]>;
  mcpServers(): McpServerHealth[];
  now(): Date;
}

/**
 * The one workspace an operator page shows: the viewer's. A Discord sign-in names none (a Discord
 * user is the same in every server), so these pages have nothing to show it.
 */
export const scopeOf = (viewer: Viewer): WorkspaceScope | undefined =>
  viewer.workspace ? { platform: viewer.platform, workspace: viewer.workspace } : undefined;

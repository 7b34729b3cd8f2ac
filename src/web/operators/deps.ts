import type { OperatorRecordsPort, WorkspaceScope } from '../../core/ports/web/operators.ts';
import type { SpendLedger } from '../../core/ports/spend.ts';
import type { SpendPolicy } from '../../core/delivery/rules/spend.ts';
import type {
  Cancellation,
  ScheduleCanceller,
} from '../../core/delivery/schedules/schedule-desk.ts';
import type { McpServerHealth } from '../../tools/mcp/source.ts';
import type { Workspace } from '../../core/ports/platform/channel-access.ts';
import type { Viewer } from '../layout.ts';
import type { Access } from '../sign-in/access.ts';

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

/** A Discord person's direct messages, as the choice of workspaces names them. */
const DIRECT_MESSAGES = 'Direct messages';

/**
 * The one workspace an operator page shows: one of the viewer's (Slack's and the console's: their
 * sign-in's; Discord's, which names none: the servers they are a member of, and, `withOwn`, their
 * direct messages, `own`: theirs alone whoever they are), the one `asked` (`?workspace=`) or their
 * only one; else the viewer's to choose from.
 */
export async function scopeOf(
  viewer: Viewer,
  access: Access,
  asked: string | null,
  withOwn = true,
): Promise<(WorkspaceScope & { own?: true }) | { choices: Workspace[] }> {
  const own = withOwn ? access.directMessages(viewer) : undefined;
  const theirs = [
    ...(await access.workspaces(viewer)),
    ...(own ? [{ id: own, name: DIRECT_MESSAGES }] : []),
  ];
  const workspace =
    asked === null && theirs.length === 1 ? theirs[0] : theirs.find((w) => w.id === asked);
  if (!workspace) return { choices: theirs };
  return {
    platform: viewer.platform,
    workspace: workspace.id,
    ...(workspace.id === own && { own: true }),
  };
}

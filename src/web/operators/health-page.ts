import type { HeldLane } from '../../core/ports/web/operators.ts';
import type { McpServerHealth } from '../../tools/mcp/source.ts';
import { html, type Html } from '../html.ts';
import { inert } from '../inert.ts';
import { dataTable, when } from './table.ts';

/** What the health page shows, read by the page's handler. */
export interface HealthView {
  /** This replica's name. */
  replica: string;
  notReady: string[];
  lanes: HeldLane[];
  inbox: { pending: number; oldest?: Date };
  servers: McpServerHealth[];
  now: Date;
}

const seconds = (ms: number) => `${Math.max(0, Math.round(ms / 1000)).toLocaleString('en-US')} s`;

/** Each replica holding a lease of the workspace (this one always), with the lanes it holds. */
function replicas(view: HealthView): Html {
  const holders = [...new Set([view.replica, ...view.lanes.map((l) => l.holder)])];
  const rows = holders.map((holder) => {
    const held = view.lanes.filter((l) => l.holder === holder);
    return [
      html`${inert(holder)}${holder === view.replica ? ' (this one)' : ''}`,
      String(held.length),
      held.length
        ? html`<ul>
            ${held.map(
              (l) =>
                html`<li>
                  ${inert(l.channel)}${l.thread ? html` / ${inert(l.thread)}` : ''}, generation
                  ${l.generation}, until ${when(l.leaseExpiresAt)}
                </li>`,
            )}
          </ul>`
        : '',
    ];
  });
  return dataTable('Replicas', ['Replica', 'Lanes held', 'Leases'], rows, '');
}

function servers(list: McpServerHealth[]): Html {
  const rows = list.map((s) => [
    inert(s.name),
    s.state,
    s.protocolVersion ? `${s.protocolVersion}${s.era ? ` (${s.era})` : ''}` : '—',
    String(s.tools),
    s.problem ? inert(s.problem) : '',
  ]);
  return dataTable(
    'MCP servers',
    ['Server', 'State', 'Protocol', 'Tools', 'Problem'],
    rows,
    'No MCP servers are configured.',
  );
}

/** /web/health's body: readiness, the replicas and their leases, the inbox, the MCP servers. */
export function healthBody(view: HealthView): Html {
  const { inbox, notReady, now } = view;
  return html`<p role="status">
      ${notReady.length ? `Not ready: ${notReady.join(', ')}.` : 'Ready: every part answers.'}
    </p>
    ${replicas(view)}
    <h2>Inbox</h2>
    <p>
      ${inbox.pending.toLocaleString('en-US')} ${inbox.pending === 1 ? 'message' : 'messages'}
      waiting in your
      workspace${
        inbox.oldest
          ? html`; the oldest came in ${seconds(now.getTime() - inbox.oldest.getTime())} ago
            (${when(inbox.oldest)})`
          : ''
      }.
    </p>
    ${servers(view.servers)}`;
}

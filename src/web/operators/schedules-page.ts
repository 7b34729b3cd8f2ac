import { nextRun } from '../../core/delivery/schedules/schedule-desk.ts';
import type { ScheduleRun, WorkspaceScope } from '../../core/ports/web/operators.ts';
import type { Schedule } from '../../core/ports/schedules.ts';
import { html, type Html } from '../html.ts';
import { inert } from '../inert.ts';
import { csrfField, type Viewer } from '../layout.ts';
import { WEB_PATH } from '../settings.ts';
import { dataTable, when } from './table.ts';

/** What a cancellation says on the page it leads back to. */
export type Cancelled = { id: string; said: 'cancelled' | 'absent' | 'not yours' };

const SAID: Record<Cancelled['said'], (id: string) => string> = {
  cancelled: (id) => `Schedule #${id} is cancelled: it will not run again.`,
  absent: (id) => `There is no schedule #${id} in your workspace (cancelled already?).`,
  'not yours': (id) => `Schedule #${id} is another person’s: only they or an admin may cancel it.`,
};

const runsOf = (runs: ScheduleRun[]): Html =>
  runs.length
    ? html`<ul>
        ${runs.map((r) => html`<li>${when(r.tick)}: ${r.status}</li>`)}
      </ul>`
    : html`none yet`;

function scheduleRow(
  { schedule: s, runs }: { schedule: Schedule; runs: ScheduleRun[] },
  viewer: Viewer,
  scope: WorkspaceScope,
  now: Date,
): Html[] {
  const next = s.pausedReason ? undefined : nextRun(s, now);
  return [
    html`#${s.id}`,
    inert(s.owner),
    inert(s.channel),
    html`${inert(s.rule)} (${s.timeZone})`,
    inert(s.prompt),
    s.pausedReason ? html`paused: ${inert(s.pausedReason)}` : html`${next ? when(next) : '—'}`,
    runsOf(runs),
    html`<form method="post" action="${WEB_PATH}/schedules/cancel">
      ${csrfField(viewer)}
      <input type="hidden" name="workspace" value="${scope.workspace}" />
      <input type="hidden" name="schedule" value="${s.id}" />
      <button type="submit" aria-label="Cancel schedule #${s.id}">Cancel</button>
    </form>`,
  ];
}

/** /web/schedules' body: each schedule the viewer may cancel, with its last runs. */
export function schedulesBody(
  schedules: Array<{ schedule: Schedule; runs: ScheduleRun[] }>,
  viewer: Viewer,
  scope: WorkspaceScope,
  now: Date,
  cancelled?: Cancelled,
): Html {
  return html`<p>
      ${viewer.admin ? 'Every schedule in your workspace (you are an admin).' : 'Your schedules in this workspace.'}
    </p>
    ${cancelled ? html`<p role="status">${SAID[cancelled.said](cancelled.id)}</p>` : ''}
    ${dataTable(
      'Schedules',
      ['Id', 'Owner', 'Channel', 'Rule', 'Prompt', 'Next run', 'Last runs', 'Cancel'],
      schedules.map((s) => scheduleRow(s, viewer, scope, now)),
      'No schedules.',
    )}`;
}

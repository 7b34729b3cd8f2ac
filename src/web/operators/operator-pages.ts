import type { SpendCap } from '../../core/delivery/rules/spend.ts';
import type { Workspace } from '../../core/ports/platform/channel-access.ts';
import type { WorkspaceScope } from '../../core/ports/web/operators.ts';
import { inert } from '../inert.ts';
import { html, type Html } from '../html.ts';
import { redirect, sendPage } from '../http.ts';
import { layout, type Viewer } from '../layout.ts';
import type { Request, WebPages } from '../pages.ts';
import { WEB_PATH } from '../settings.ts';
import { scopeOf, type OperatorDeps } from './deps.ts';
import { healthBody } from './health-page.ts';
import { schedulesBody, type Cancelled } from './schedules-page.ts';
import { usageBody, usageQuery } from './usage-page.ts';

/** A schedule's last runs shown. */
const RUNS = 3;

/** Each workspace's name, with its id where the name is unknown or another's too. */
function labels(choices: Workspace[]): string[] {
  const named = choices.map((w) => w.name ?? '');
  return choices.map(({ id }, i) => {
    const name = named[i]!;
    if (!name) return id;
    return named.indexOf(name) === named.lastIndexOf(name) ? name : `${name} (${id})`;
  });
}

/** The workspaces to choose from, for a viewer with several (a Discord sign-in: servers). */
function chooseWorkspace(page: string, choices: Workspace[]): Html {
  const label = labels(choices);
  const link = ({ id }: Workspace, i: number) =>
    html`<a href="${WEB_PATH}/${page}?workspace=${id}">${inert(label[i]!)}</a>`;
  return choices.length
    ? html`<p>Which server? These pages show one at a time.</p>
        <ul>
          ${choices.map((w, i) => html`<li>${link(w, i)}</li>`)}
        </ul>`
    : html`<p>These pages show one workspace, and none of Spool's has you as a member.</p>`;
}

/** What a redirect after Cancel says: a schedule's id and what became of it. */
function cancelledOf(query: URLSearchParams): Cancelled | undefined {
  const id = query.get('cancelled') ?? '';
  const said = query.get('said');
  if (!/^\d{1,18}$/.test(id)) return undefined;
  return said === 'cancelled' || said === 'absent' || said === 'not yours'
    ? { id, said }
    : undefined;
}

/** The caps that may count usage in the viewer's workspace. */
const capsOf = (caps: SpendCap[] | undefined, platform: string, workspace: string) =>
  (caps ?? []).filter(
    ({ match }) =>
      (!match?.platform || match.platform === platform) &&
      (!match?.workspace || match.workspace === workspace),
  );

type Body = (r: Request, viewer: Viewer, scope: WorkspaceScope) => Promise<Html>;

/**
 * A page of the viewer's workspace titled `title` (or a word that there is none). An admin's page
 * answers anyone else as one that does not exist.
 */
const workspacePage =
  (pages: WebPages, title: string, body: Body, adminOnly = false) =>
  async (r: Request, viewer: Viewer) => {
    const [page = ''] = r.parts;
    if (r.parts.length > 1 || (adminOnly && !viewer.admin)) return pages.notFound(r, viewer);
    // Direct messages are no server's: an admin's page is of servers alone.
    const scope = await scopeOf(
      viewer,
      pages.access,
      r.url.searchParams.get('workspace'),
      !adminOnly,
    );
    // In one's own direct messages, an admin is anyone: only their own is theirs.
    const seen = 'own' in scope ? { ...viewer, admin: false } : viewer;
    const shown =
      'choices' in scope ? chooseWorkspace(page, scope.choices) : await body(r, seen, scope);
    sendPage(r.res, 200, layout(title, shown, viewer));
  };

function addUsagePage(pages: WebPages, { records, policy, spend, now }: OperatorDeps): void {
  const usage: Body = async (_r, viewer, scope) => {
    const at = now();
    const [rows, holds] = await Promise.all([
      spend.usage(usageQuery(viewer, scope, at)),
      records.holds({ ...scope, ...(viewer.admin ? {} : { user: viewer.user }) }),
    ]);
    const caps = capsOf(policy?.caps, scope.platform, scope.workspace);
    const currency = policy?.currency;
    return usageBody({ rows, holds, caps, now: at, ...(currency ? { currency } : {}) }, viewer);
  };
  pages.page('usage', workspacePage(pages, 'Usage and cost', usage));
}

function addSchedulesPage(pages: WebPages, deps: OperatorDeps): void {
  const schedules: Body = async (r, viewer, scope) => {
    const mine = viewer.admin ? {} : { owner: viewer.user };
    const listed = await deps.records.schedules({ ...scope, ...mine }, RUNS);
    const cancelled = cancelledOf(r.url.searchParams);
    // A forged address cannot say a schedule still listed was cancelled.
    const stillListed = listed.some((s) => s.schedule.id === cancelled?.id);
    const said = cancelled?.said === 'cancelled' && stillListed ? undefined : cancelled;
    return schedulesBody(listed, viewer, scope, deps.now(), said);
  };
  pages.page('schedules', workspacePage(pages, 'Schedules', schedules));
  pages.action('schedules/cancel', async (r, viewer, form) => {
    const scope = await scopeOf(viewer, pages.access, form.get('workspace'));
    const id = form.get('schedule') ?? '';
    if ('choices' in scope || !/^\d{1,18}$/.test(id))
      return redirect(r.res, `${WEB_PATH}/schedules`);
    const done = await deps.cancelSchedule({ ...scope, user: viewer.user }, id);
    const said =
      done === undefined || done === 'absent'
        ? 'absent'
        : done === 'cancelled'
          ? 'cancelled'
          : 'not yours';
    const back = new URLSearchParams({ cancelled: id, said, workspace: scope.workspace });
    redirect(r.res, `${WEB_PATH}/schedules?${back}`);
  });
}

function addHealthPage(pages: WebPages, deps: OperatorDeps): void {
  const health: Body = async (_r, _viewer, scope) => {
    const [notReady, lanes, inbox] = await Promise.all([
      deps.notReady(),
      deps.records.heldLanes(scope),
      deps.records.inbox(scope),
    ]);
    const servers = deps.mcpServers();
    return healthBody({ replica: deps.replica, notReady, lanes, inbox, servers, now: deps.now() });
  };
  pages.page('health', workspacePage(pages, 'Health', health, true));
}

/**
 * The operator pages (docs/web-pages.md): usage and cost and the schedules (an admin's: the whole
 * workspace's; anyone else's: their own), and health (admins alone). Each shows the viewer's
 * workspace and nothing of another.
 */
export function addOperatorPages(pages: WebPages, deps: OperatorDeps): void {
  addUsagePage(pages, deps);
  addSchedulesPage(pages, deps);
  addHealthPage(pages, deps);
}

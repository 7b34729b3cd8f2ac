import type { WebSession } from '../../core/ports/web/web-sessions.ts';
import { html, type Html } from '../html.ts';
import { inert } from '../inert.ts';
import { redirect, sendPage } from '../http.ts';
import { csrfField, layout, type Viewer } from '../layout.ts';
import type { WebPages } from '../pages.ts';
import { WEB_PATH } from '../settings.ts';

function sessionRow(s: WebSession, viewer: Viewer): Html {
  const mine = s.id === viewer.session;
  return html`<tr>
    <td>${inert(s.person.user)}</td>
    <td>${s.createdAt.toISOString()}</td>
    <td>${s.expiresAt.toISOString()}</td>
    <td>
      ${
        mine
          ? 'this browser'
          : html`<form method="post" action="${WEB_PATH}/sign-ins/end">
              ${csrfField(viewer)}
              <input type="hidden" name="session" value="${s.id}" />
              <button
                type="submit"
                aria-label="Sign out ${s.person.user}'s session from ${s.createdAt.toISOString()}"
              >
                Sign out
              </button>
            </form>`
      }
    </td>
  </tr>`;
}

/**
 * /web/sign-ins: the viewer's own sign-ins to these pages (an admin's: everyone's in their
 * workspace), each of which they may end.
 */
export function addSignInsPage(pages: WebPages): void {
  // Discord's sign-ins name no server: an admin's of one server would list every server's people.
  const everyones = (viewer: Viewer) => viewer.admin && viewer.workspace !== '';
  const listed = (viewer: Viewer) =>
    pages.sessions.list({
      platform: viewer.platform,
      workspace: viewer.workspace,
      ...(everyones(viewer) ? {} : { user: viewer.user }),
    });
  pages.page('sign-ins', async (r, viewer) => {
    const sessions = await listed(viewer);
    const body = html`<p>
        ${everyones(viewer) ? 'Everyone signed in to these pages in your workspace.' : 'Where you are signed in to these pages.'}
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">Signed in</th>
            <th scope="col">Until</th>
            <th scope="col">End it</th>
          </tr>
        </thead>
        <tbody>
          ${sessions.map((s) => sessionRow(s, viewer))}
        </tbody>
      </table>`;
    sendPage(r.res, 200, layout('Sign-ins', body, viewer));
  });
  pages.action('sign-ins/end', async (r, viewer, form) => {
    const id = form.get('session') ?? '';
    // Only a session the viewer could see listed: their own, or an admin's workspace's.
    if ((await listed(viewer)).some((s) => s.id === id)) await pages.sessions.end(id, viewer);
    redirect(r.res, `${WEB_PATH}/sign-ins`);
  });
}

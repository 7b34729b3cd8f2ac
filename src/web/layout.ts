import { html, type Html } from './html.ts';
import { WEB_PATH } from './settings.ts';

/** Who is looking at a page: their session's person, and whether they are an admin. */
export interface Viewer {
  platform: string;
  workspace: string;
  user: string;
  admin: boolean;
  /** The token the page's forms carry back. */
  csrf: string;
  /** The session's id (the SHA-256 of its cookie). */
  session: string;
}

/** A form field every form that changes something carries (src/web/sign-in/sessions.ts checks it). */
export const csrfField = (viewer: Viewer): Html =>
  html`<input type="hidden" name="csrf" value="${viewer.csrf}" />`;

function navigation(viewer: Viewer): Html {
  const link = (path: string, label: string) =>
    html`<li><a href="${WEB_PATH}${path}">${label}</a></li>`;
  // Health is an admin's page: nobody else is shown a link to it.
  const links = [
    link('/', 'Spool'),
    link('/search', 'Search'),
    link('/usage', 'Usage'),
    link('/schedules', 'Schedules'),
    viewer.admin ? link('/health', 'Health') : '',
    link('/sign-ins', 'Sign-ins'),
  ];
  return html`<nav aria-label="Pages">
    <ul>
      ${links}
    </ul>
    <form method="post" action="${WEB_PATH}/sign-out" class="sign-out">
      ${csrfField(viewer)} <span>${viewer.platform} · ${viewer.user}</span>
      <button type="submit">Sign out</button>
    </form>
  </nav>`;
}

/** A whole page: the header with the pages and sign-out for a viewer, and `body` under `title`. */
export function layout(title: string, body: Html, viewer?: Viewer): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Spool</title>
        <link rel="stylesheet" href="${WEB_PATH}/style.css" />
        <link rel="icon" type="image/png" href="${WEB_PATH}/favicon.png" />
      </head>
      <body>
        <header>${viewer ? navigation(viewer) : html`<p class="brand">Spool</p>`}</header>
        <main>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html> `;
}

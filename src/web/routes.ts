import type { Route } from '../observability.ts';
import { WEB_PATH } from './settings.ts';
import type { WebPages } from './pages.ts';

/**
 * GET and POST under /web on Spool's HTTP server, answered by `pages` once the database is open
 * (503 before: the page can be reloaded).
 */
export function webRoutes(pages: () => WebPages | undefined): Route[] {
  const handler: Route['handler'] = (req, res) => {
    const web = pages();
    if (!web) return void res.writeHead(503, { 'retry-after': '1' }).end();
    void web.handle(req, res);
  };
  return [
    { path: WEB_PATH, method: 'GET', prefix: true, handler },
    { path: WEB_PATH, method: 'POST', prefix: true, handler },
  ];
}

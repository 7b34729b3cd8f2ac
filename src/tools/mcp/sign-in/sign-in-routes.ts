// Apart from sign-in.ts, which loads the MCP SDK: the routes are served wherever Spool has an HTTP
// server, sign-ins configured or not.
import type { Route } from '../../../observability.ts';
import { SIGN_IN_CALLBACK_PATH, SIGN_IN_LINK_PATH } from '../../settings.ts';
import type { SignInPage, SignIns } from './sign-in.ts';

/**
 * GET SIGN_IN_LINK_PATH (the links sent to people) and SIGN_IN_CALLBACK_PATH (the platform's and
 * the authorization server's redirects) on Spool's HTTP server, answered by `signIns` once the bot
 * has started (503 before: a redirect can be reloaded).
 */
export function signInRoutes(signIns: () => SignIns | undefined): Route[] {
  const route = (
    path: string,
    answer: (desk: SignIns, query: URLSearchParams, cookies?: string) => Promise<SignInPage>,
  ): Route => ({
    path,
    method: 'GET',
    handler: (req, res) => {
      const send = ({ status, text, location, cookie }: SignInPage) =>
        res
          .writeHead(status, {
            'content-type': 'text/plain; charset=utf-8',
            'cache-control': 'no-store',
            'referrer-policy': 'no-referrer',
            ...(location ? { location } : {}),
            ...(cookie ? { 'set-cookie': cookie } : {}),
          })
          .end(text === undefined ? undefined : `${text}\n`);
      const desk = signIns();
      if (!desk) return send({ status: 503, text: 'Spool is starting; reload in a moment.' });
      const query = new URL(req.url ?? '/', 'http://spool').searchParams;
      answer(desk, query, req.headers.cookie).then(send, () =>
        send({ status: 500, text: 'Signing in failed. Nobody was signed in.' }),
      );
    },
  });
  return [
    route(SIGN_IN_LINK_PATH, (desk, query) => desk.follow(query)),
    route(SIGN_IN_CALLBACK_PATH, (desk, query, cookies) => desk.complete(query, cookies)),
  ];
}

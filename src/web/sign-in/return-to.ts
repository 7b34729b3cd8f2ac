import { WEB_PATH } from '../settings.ts';

/** The longest address a sign-in returns to. */
const MAX_CHARS = 2_000;
/** Pages that sign in or out: returning to them would begin again. */
const NOT_RETURNED_TO = /^\/web\/(sign-in|local|sign-out)(\/|\?|$)/;

/**
 * The page a sign-in returns to, when `asked` is one of Spool's own pages: a path under /web as it
 * stands (already normalized, so `..` and `.` are refused), with no backslash, control character
 * or whitespace, and its path none once percent-decoded either (`%2F%2Fevil`, `%5C`). Anything else (another
 * origin, `//host`, `/\host`, a scheme) is undefined: the sign-in lands on the home page.
 */
export function returnPath(asked: string | null | undefined): string | undefined {
  if (!asked || asked.length > MAX_CHARS || /[\\\s\p{Cc}]/u.test(asked)) return undefined;
  const [path = ''] = asked.split('?');
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  for (const form of [path, decoded])
    if (/[\\\s\p{Cc}]/u.test(form) || form.includes('//') || !form.startsWith(`${WEB_PATH}/`))
      return undefined;
  const url = new URL(asked, 'http://spool');
  if (url.origin !== 'http://spool' || `${url.pathname}${url.search}` !== asked) return undefined;
  return NOT_RETURNED_TO.test(decoded) ? undefined : asked;
}

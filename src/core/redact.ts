/*
 * Well-known credential formats, for `TOOL_RESULT_REDACT_SECRETS`. Each is specific enough that a
 * match is almost surely a credential; generic shapes (`password=…`, long hex) are left alone,
 * because redaction before storage cannot be undone and a false match would lose real data.
 *
 * A hostile result can be megabytes built to make a backtracking regex crawl ("-eyJ-eyJ-…"), and
 * the event loop serves everyone: so the text is cut once into tokens (runs of base64url
 * characters joined by single dots, a linear scan), and each pattern is tested anchored against a
 * whole token, which is linear too. Private keys span lines and are found with two markers.
 */
const TOKEN = /[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*/g;
const TOKEN_PATTERNS: ReadonlyArray<[kind: string, pattern: RegExp]> = [
  ['AWS access key', /^(?:AKIA|ASIA)[0-9A-Z]{16}$/],
  ['GitHub token', /^(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})$/],
  ['Slack token', /^(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}$/],
  ['API key', /^sk-[A-Za-z0-9_-]{20,}$/],
  ['Google API key', /^AIza[0-9A-Za-z_-]{35}$/],
  ['Stripe key', /^[rs]k_live_[0-9A-Za-z]{24,}$/],
  ['JSON web token', /^eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}$/],
];
const KEY_BEGIN = /-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----/g;
const KEY_END = /-----END [A-Z ]{0,40}PRIVATE KEY-----/g;

function redactPrivateKeys(text: string): string {
  let out = '';
  let from = 0;
  for (KEY_BEGIN.lastIndex = 0; ;) {
    const begin = KEY_BEGIN.exec(text);
    if (!begin) break;
    KEY_END.lastIndex = KEY_BEGIN.lastIndex;
    const end = KEY_END.exec(text);
    // No end after this begin: none after any later begin either.
    if (!end) break;
    out += `${text.slice(from, begin.index)}[redacted private key]`;
    from = KEY_BEGIN.lastIndex = KEY_END.lastIndex;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** `text` with every match of a known credential format replaced by `[redacted <kind>]`. */
export function redactSecretPatterns(text: string): string {
  return redactPrivateKeys(text).replace(TOKEN, (token) => {
    if (token.length < 20) return token;
    const kind = TOKEN_PATTERNS.find(([, pattern]) => pattern.test(token))?.[0];
    return kind ? `[redacted ${kind}]` : token;
  });
}

/**
 * A secret as text may hold it: as is, and escaped once or twice by JSON (a field, or JSON inside a
 * field).
 */
function spellings(secret: string): string[] {
  const once = JSON.stringify(secret).slice(1, -1);
  return [...new Set([secret, once, JSON.stringify(once).slice(1, -1)])];
}

/**
 * One masking for the bot's own secrets wherever text leaves it (log lines, error replies, stored
 * tool results): each exact value, in every spelling, becomes `[redacted]`. Values under six
 * characters are skipped: they would mask ordinary words.
 */
export function secretMasker(secrets: readonly string[]): (text: string) => string {
  const all = [...new Set(secrets.filter((s) => s.length >= 6).flatMap(spellings))].sort(
    (a, b) => b.length - a.length,
  );
  return (text) =>
    all.reduce(
      (out, secret) => (out.includes(secret) ? out.split(secret).join('[redacted]') : out),
      text,
    );
}

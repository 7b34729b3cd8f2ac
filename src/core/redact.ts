/**
 * Well-known credential formats, for `TOOL_RESULT_REDACT_SECRETS`. Each is specific enough that a
 * match is almost surely a credential; generic shapes (`password=…`, long hex) are left alone,
 * because redaction before storage cannot be undone and a false match would lose real data.
 */
const PATTERNS: ReadonlyArray<[kind: string, pattern: RegExp]> = [
  ['private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g],
  ['AWS access key', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g],
  ['GitHub token', /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b/g],
  ['Slack token', /\bxox[abposr]-[A-Za-z0-9-]{10,}|\bxapp-[A-Za-z0-9-]{10,}/g],
  ['API key', /\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}/g],
  ['Google API key', /\bAIza[0-9A-Za-z_-]{35}\b/g],
  ['Stripe key', /\b[rs]k_live_[0-9A-Za-z]{24,}\b/g],
  ['JSON web token', /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g],
];

/** `text` with every match of a known credential format replaced by `[redacted <kind>]`. */
export function redactSecretPatterns(text: string): string {
  return PATTERNS.reduce((out, [kind, pattern]) => out.replace(pattern, `[redacted ${kind}]`), text);
}

/** A secret as text may hold it: as is, and escaped once or twice by JSON (a field, or JSON inside a field). */
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
  const all = [...new Set(secrets.filter((s) => s.length >= 6).flatMap(spellings))].sort((a, b) => b.length - a.length);
  return (text) => all.reduce((out, secret) => (out.includes(secret) ? out.split(secret).join('[redacted]') : out), text);
}

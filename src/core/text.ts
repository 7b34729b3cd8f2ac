/**
 * Cutting text for the model. Every cut lands on a code-point boundary: half of a UTF-16
 * surrogate pair serialises as a lone "\udXXX" escape, which the API rejects as invalid Unicode.
 */

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** Moves `index` back by one when it would split a surrogate pair. */
export function codePointBoundary(text: string, index: number): number {
  const at = Math.max(0, Math.min(index, text.length));
  if (
    at > 0 &&
    at < text.length &&
    isLowSurrogate(text.charCodeAt(at)) &&
    isHighSurrogate(text.charCodeAt(at - 1))
  ) {
    return at - 1;
  }
  return at;
}

/** `text.slice(start, end)` with both ends moved onto code-point boundaries. */
export function safeSlice(text: string, start: number, end = text.length): string {
  return text.slice(codePointBoundary(text, start), codePointBoundary(text, end));
}

/** The first `chars` characters, cut back to the last line break when there is one. */
export function headAtLineBreak(text: string, chars: number): string {
  const head = safeSlice(text, 0, chars);
  if (head.length >= text.length) return head;
  const lastBreak = head.lastIndexOf('\n');
  return lastBreak > 0 ? head.slice(0, lastBreak + 1) : head;
}

/** The last `chars` characters, cut forward past the first line break when there is one. */
export function tailAtLineBreak(text: string, chars: number): string {
  const tail = safeSlice(text, text.length - chars);
  if (tail.length >= text.length) return tail;
  const firstBreak = tail.indexOf('\n');
  return firstBreak >= 0 && firstBreak < tail.length - 1 ? tail.slice(firstBreak + 1) : tail;
}

export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < text.length - 1; i = text.indexOf('\n', i + 1))
    lines++;
  return lines;
}

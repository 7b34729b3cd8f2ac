import { codePointBoundary } from '../../core/text.ts';

/** How a result is best shown: as a JSON tree, a table, or text. */
export type ResultShape =
  | { kind: 'json'; value: unknown; pretty: string }
  | { kind: 'csv'; rows: string[][] }
  | { kind: 'text' };

/** Past this, JSON is not parsed for a tree: it is shown as text, page by page. */
const JSON_MAX_CHARS = 5_000_000;

/**
 * What a result's text is: JSON when it is one whole JSON object or array, CSV when its lines split
 * into the same number (two or more) of comma-separated fields, else text.
 */
export function shapeOf(content: string): ResultShape {
  const trimmed = content.trim();
  if (/^[[{]/.test(trimmed) && trimmed.length <= JSON_MAX_CHARS) {
    try {
      const value: unknown = JSON.parse(trimmed);
      return { kind: 'json', value, pretty: JSON.stringify(value, null, 2) };
    } catch {
      // Not JSON after all: shown as what else it is.
    }
  }
  const rows = csvRows(content);
  return rows ? { kind: 'csv', rows } : { kind: 'text' };
}

/**
 * RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF), or undefined when `text` is not a table:
 * fewer than two rows, fewer than two columns, or rows of different widths.
 */
export function csvRows(text: string): string[][] | undefined {
  // A table's first line has a comma: anything else is told from one without reading it all.
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  if (!firstLine.includes(',')) return undefined;
  const { rows, open } = csvParse(text);
  if (open) return undefined;
  const width = rows[0]?.length ?? 0;
  if (rows.length < 2 || width < 2 || rows.some((r) => r.length !== width)) return undefined;
  return rows;
}

/** A page of a long text: where it starts and ends (on code point boundaries), and how many. */
export interface TextPage {
  index: number;
  count: number;
  start: number;
  end: number;
}

/** Page `index` (from 0, clamped) of a text cut into pages of `size` characters. */
export function pageOf(text: string, index: number, size: number): TextPage {
  const count = Math.max(1, Math.ceil(text.length / size));
  const at = Math.min(Math.max(0, index), count - 1);
  const start = codePointBoundary(text, at * size);
  const end = codePointBoundary(text, (at + 1) * size);
  return { index: at, count, start, end };
}

/** The page of `size` that holds `offset`. */
export const pageHolding = (offset: number, size: number): number => Math.floor(offset / size);

/** The rows of RFC 4180 text; `open` when it ends inside a quoted field. */
function csvParse(text: string): { rows: string[][]; open: boolean } {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c !== '"') field += c;
      else if (text[i + 1] === '"') field += text[++i];
      else quoted = false;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') endField();
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endField();
      rows.push(row);
      row = [];
    } else field += c;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return { rows, open: quoted };
}

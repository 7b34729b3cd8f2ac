import { html, type Html, type HtmlValue } from '../html.ts';

/**
 * A table of the operator pages: its caption (what it lists, also its name for screen readers),
 * column heads, and rows; a sentence in its place when there are none.
 */
export function dataTable(
  caption: string,
  heads: string[],
  rows: HtmlValue[][],
  none: string,
): Html {
  if (rows.length === 0)
    return html`<h2>${caption}</h2>
      <p class="muted">${none}</p>`;
  return html`<h2>${caption}</h2>
    <div class="scrolls">
      <table class="listing" aria-label="${caption}">
        <thead>
          <tr>
            ${heads.map((h) => html`<th scope="col">${h}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (cells) =>
              html`<tr>
                ${cells.map((c) => html`<td>${c}</td>`)}
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
}

/** An instant as the pages show it: UTC, to the second. */
export const when = (instant: Date): string =>
  `${instant.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

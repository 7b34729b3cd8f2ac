import { findLines } from '../../core/agent/results/grep.ts';
import type { StoredPart, CallRecord } from '../../core/ports/web/records.ts';
import { html, type Html } from '../html.ts';
import { inert } from '../inert.ts';
import { jsonTree, nodeCount, TREE_MAX_NODES } from './json-tree.ts';
import { pageHolding, pageOf, type ResultShape } from './result-shape.ts';
import { WEB_PATH } from '../settings.ts';

/** What a result page was asked for (its query string). */
export interface ResultQuery {
  /** 'shaped': the JSON tree or the table where the result is one; 'text': its text as stored. */
  view: 'shaped' | 'text';
  page: number;
  find?: string;
  /** Where a find's match is, to mark on its page. */
  at?: number;
}

export function resultQueryOf(query: URLSearchParams): ResultQuery {
  const int = (name: string) => {
    const raw = query.get(name);
    if (raw === null || !/^\d{1,15}$/.test(raw)) return undefined;
    const value = Number(raw);
    return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  };
  const find = query.get('find')?.slice(0, 500);
  const at = int('at');
  return {
    view: query.get('view') === 'text' ? 'text' : 'shaped',
    page: int('page') ?? 0,
    ...(find ? { find } : {}),
    ...(at === undefined ? {} : { at }),
  };
}

/** CSV rows shown on one page of a table. */
const TABLE_ROWS = 500;

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Whether a binary part is shown as an image (a kept raster image); else it is a download. */
export const isShownImage = (part: StoredPart): boolean =>
  part.kept && IMAGE_TYPES.has(part.mimeType ?? '');

function linkTo(id: string, q: Partial<ResultQuery>): string {
  const params = new URLSearchParams();
  if (q.view === 'text') params.set('view', 'text');
  if (q.page) params.set('page', String(q.page));
  if (q.find) params.set('find', q.find);
  if (q.at !== undefined) params.set('at', String(q.at));
  const search = params.toString();
  return `${WEB_PATH}/results/${id}${search ? `?${search}` : ''}${q.at === undefined ? '' : '#found'}`;
}

function pager(id: string, q: ResultQuery, index: number, count: number, unit: string): Html {
  if (count <= 1) return html``;
  const to = (page: number, label: string) =>
    html`<a href="${linkTo(id, { ...q, page, at: undefined })}">${label}</a>`;
  return html`<nav class="pager" aria-label="Pages of the result">
    ${index > 0 ? [to(0, 'First'), to(index - 1, 'Previous')] : ''}
    <span>${unit} ${index + 1} of ${count}</span>
    ${index < count - 1 ? [to(index + 1, 'Next'), to(count - 1, 'Last')] : ''}
  </nav>`;
}

/** One page of text, with the found match's line marked. */
function textPage(id: string, text: string, q: ResultQuery, pageChars: number): Html {
  const page = pageOf(text, q.page, pageChars);
  const body = text.slice(page.start, page.end);
  let shown: Html = inert(body);
  if (q.at !== undefined && q.at >= page.start && q.at < page.end) {
    // The whole line of the match is marked.
    const from = body.lastIndexOf('\n', q.at - page.start - 1) + 1;
    const nl = body.indexOf('\n', from);
    const to = nl < 0 ? body.length : nl;
    shown = html`${inert(body.slice(0, from))}<mark id="found">${inert(body.slice(from, to))}</mark
      >${inert(body.slice(to))}`;
  }
  return html`${pager(id, q, page.index, page.count, 'Page')}
    <pre
      class="content"
      tabindex="0"
      aria-label="The result, characters ${page.start} to ${page.end} of ${text.length}"
    >
${shown}</pre>
    ${pager(id, q, page.index, page.count, 'Page')}`;
}

function table(id: string, rows: string[][], q: ResultQuery): Html {
  const [head = [], ...body] = rows;
  const count = Math.max(1, Math.ceil(body.length / TABLE_ROWS));
  const index = Math.min(q.page, count - 1);
  const shown = body.slice(index * TABLE_ROWS, (index + 1) * TABLE_ROWS);
  return html`${pager(id, q, index, count, 'Rows page')}
    <div class="content" tabindex="0" role="region" aria-label="The result as a table">
      <table>
        <thead>
          <tr>
            ${head.map((h) => html`<th scope="col">${inert(h)}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${shown.map(
            (r) =>
              html`<tr>
                ${r.map((c) => html`<td>${inert(c)}</td>`)}
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${pager(id, q, index, count, 'Rows page')}`;
}

/** The result as it is best read: a JSON tree, a table, or text page by page. */
function shaped(
  id: string,
  content: string,
  shape: ResultShape,
  q: ResultQuery,
  pageChars: number,
) {
  if (q.view === 'text' || shape.kind === 'text') return textPage(id, content, q, pageChars);
  if (shape.kind === 'csv') return table(id, shape.rows, q);
  if (nodeCount(shape.value) <= TREE_MAX_NODES)
    return html`<div
      class="json content"
      tabindex="0"
      role="region"
      aria-label="The result as JSON"
    >
      ${jsonTree(shape.value)}
    </div>`;
  return textPage(id, shape.pretty, q, pageChars);
}

/** The matches of a find, each a link to its page with its line marked. */
function found(id: string, content: string, q: ResultQuery, pageChars: number): Html {
  if (!q.find) return html``;
  const lines = findLines(content, q.find, 0, {
    maxMatches: 200,
    maxChars: 40_000,
    timeoutMs: 250,
  });
  if (lines === 'timeout')
    return html`<p role="status">That pattern took too long to match; try plain words.</p>`;
  const how = lines.literal ? ' (matched literally)' : '';
  return html`<section aria-label="Found">
    <p role="status">
      ${lines.count} matching
      lines${how}${
        lines.count > lines.lines.length ? `, the first ${lines.lines.length} shown` : ''
      }.
    </p>
    <ol class="hits">
      ${lines.lines.map(
        ({ at, line }) =>
          html`<li>
            <a
              href="${linkTo(id, { view: 'text', page: pageHolding(at, pageChars), find: q.find, at })}"
              >at ${at}</a
            >: <code>${inert(line)}</code>
          </li>`,
      )}
    </ol>
  </section>`;
}

function parts(call: CallRecord): Html {
  const binaries = call.result?.binaries ?? [];
  if (binaries.length === 0) return html``;
  const src = (p: StoredPart) => `${WEB_PATH}/results/${call.id}/parts/${p.position}`;
  return html`<h2>Binary parts</h2>
    <ul>
      ${binaries.map((p) =>
        isShownImage(p)
          ? html`<li>
              <img
                class="part"
                src="${src(p)}"
                alt="Image ${p.position + 1} of the result (${p.mimeType})"
              />
            </li>`
          : p.kept
            ? html`<li>
                <a href="${src(p)}" download>Download part ${p.position + 1}</a> (${p.kind},
                ${p.mimeType ?? 'unknown type'}, ${p.sizeBytes} bytes)
              </li>`
            : html`<li>
                Part ${p.position + 1} (${p.kind}, ${p.sizeBytes} bytes) was too large to keep.
              </li>`,
      )}
    </ul>`;
}

function summary(call: CallRecord): Html {
  const r = call.result;
  return html`<dl class="meta">
      <dt>Tool</dt>
      <dd>${inert(call.toolName)}</dd>
      <dt>Call</dt>
      <dd>${inert(call.toolCallId)}, ${call.createdAt.toISOString()}</dd>
      <dt>Where</dt>
      <dd>
        ${call.place.platform} · ${inert(call.place.channel)} ·
        <a href="${WEB_PATH}/conversations/${call.conversationId}">the conversation</a>
      </dd>
      ${
        r
          ? html`<dt>Outcome</dt>
              <dd>
                ${r.isError ? 'error' : 'ok'} in ${r.durationMs} ms, ${r.content.length} characters
              </dd>`
          : html`<dt>Outcome</dt>
              <dd>no result stored</dd>`
      }
      ${
        call.approval
          ? html`<dt>Approval</dt>
              <dd>${call.approval.status}${call.approval.by ? ` by ${call.approval.by}` : ''}</dd>`
          : ''
      }
    </dl>
    <details>
      <summary>Arguments</summary>
      <pre class="content">${inert(call.arguments)}</pre>
    </details>`;
}

/** The result page's body: the call, a find, the whole result paged, and its binary parts. */
export function resultBody(
  call: CallRecord,
  shape: ResultShape,
  q: ResultQuery,
  pageChars: number,
): Html {
  const content = call.result?.content ?? '';
  const views =
    shape.kind === 'text'
      ? html``
      : html`<p>
          View:
          ${q.view === 'text' ? html`<a href="${linkTo(call.id, { view: 'shaped' })}">${shape.kind === 'json' ? 'JSON tree' : 'table'}</a> · text as stored` : html`${shape.kind === 'json' ? 'JSON tree' : 'table'} · <a href="${linkTo(call.id, { view: 'text' })}">text as stored</a>`}
        </p>`;
  return html`${summary(call)}
    <form class="find" method="get" action="${WEB_PATH}/results/${call.id}" role="search">
      <label
        >Find in the result (a regular expression, or plain words)
        <input type="search" name="find" value="${q.find ?? ''}"
      /></label>
      <button type="submit">Find</button>
    </form>
    ${found(call.id, content, q, pageChars)} ${views}
    ${shaped(call.id, content, shape, q, pageChars)} ${parts(call)}`;
}

import type { ChannelScope } from '../../core/ports/conversation.ts';
import type { HistoryHit } from '../../core/ports/history.ts';
import { html, type Html } from '../html.ts';
import { inert } from '../inert.ts';
import { WEB_PATH } from '../settings.ts';

/** What the search form asks: words, and the filters. */
export interface SearchQuery {
  text: string;
  /** A channel as `platform/workspace/channel`; every readable one when empty. */
  channel: string;
  tool: string;
  /** An MCP server: its tools' names, as the model sees them, begin `<server>__`. */
  server: string;
  /** A person's platform id: the turns that answered them. */
  person: string;
  days?: number;
}

export function searchQueryOf(query: URLSearchParams): SearchQuery {
  const days = Number(query.get('days'));
  return {
    text: (query.get('q') ?? '').slice(0, 500),
    channel: query.get('channel') ?? '',
    tool: (query.get('tool') ?? '').slice(0, 200),
    server: (query.get('server') ?? '').slice(0, 200),
    person: (query.get('person') ?? '').slice(0, 200),
    ...(Number.isSafeInteger(days) && days > 0 ? { days } : {}),
  };
}

export const channelId = (c: ChannelScope): string => `${c.platform}/${c.workspace}/${c.channel}`;

/** A hit found in `channel`. */
export type PlacedHit = HistoryHit & { channel: ChannelScope };

function hitLink(hit: PlacedHit): string {
  const where = new URLSearchParams({ channel: channelId(hit.channel), thread: hit.thread });
  if (hit.toolCallId) where.set('call', hit.toolCallId);
  if (hit.offset !== undefined) where.set('at', String(hit.offset));
  return `${WEB_PATH}/open?${where.toString()}`;
}

function hitItem(hit: PlacedHit): Html {
  const what = hit.toolName ? `${hit.kind.replace('_', ' ')} of ${hit.toolName}` : hit.kind;
  return html`<li>
    <a href="${hitLink(hit)}">${inert(what)}</a>
    <span class="meta"
      >${hit.createdAt.toISOString()} · ${inert(channelId(hit.channel))} · thread
      ${inert(hit.thread)}${hit.person ? html` · asked by ${inert(hit.person)}` : ''}</span
    >
    <div><code>${inert(hit.excerpt)}</code></div>
  </li>`;
}

/** The search page: the form, and the hits newest first. */
export function searchBody(q: SearchQuery, channels: ChannelScope[], hits?: PlacedHit[]): Html {
  const option = (c: ChannelScope) =>
    html`<option value="${channelId(c)}" ${q.channel === channelId(c) ? html`selected` : ''}>
      ${inert(channelId(c))}
    </option>`;
  return html`<form class="filters" method="get" action="${WEB_PATH}/search" role="search">
      <label>Words <input type="search" name="q" value="${q.text}" required /></label>
      <label
        >Channel
        <select name="channel">
          <option value="">Every channel you can read</option>
          ${channels.map(option)}
        </select></label
      >
      <label>Tool <input name="tool" value="${q.tool}" /></label>
      <label>Server <input name="server" value="${q.server}" /></label>
      <label>Person <input name="person" value="${q.person}" /></label>
      <label>Within days <input name="days" type="number" min="1" value="${q.days ?? ''}" /></label>
      <button type="submit">Search</button>
    </form>
    ${
      hits === undefined
        ? html`<p>
            Searches every stored message, tool call and whole tool result of the channels you can
            read, as <code>search_history</code> does.
          </p>`
        : html`<p role="status">${hits.length} found.</p>
            <ol class="hits">
              ${hits.map(hitItem)}
            </ol>`
    }`;
}

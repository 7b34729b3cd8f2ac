import type { ConversationEntry, ConversationRecord } from '../../core/ports/web/records.ts';
import { html, type Html } from '../html.ts';
import { inert } from '../inert.ts';
import { WEB_PATH } from '../settings.ts';

const time = (at: Date) => at.toISOString().replace('T', ' ').slice(0, 19);

function entry(e: ConversationEntry): Html {
  switch (e.kind) {
    case 'message':
      return html`<li class="entry ${e.role}">
        <p class="meta">
          ${time(e.at)} · ${e.role}${e.person ? ` · ${e.person}` : ''} · turn ${e.turn}
        </p>
        <div class="content">${inert(e.content)}</div>
      </li>`;
    case 'call': {
      const { call } = e;
      const outcome = call.result
        ? `${call.result.isError ? 'error' : 'ok'} in ${call.result.durationMs} ms, ${call.result.content.length} characters`
        : 'no result stored';
      return html`<li class="entry call">
        <p class="meta">${time(e.at)} · tool call · turn ${e.turn}</p>
        <p>
          <a href="${WEB_PATH}/results/${call.id}">${inert(call.toolName)}</a>:
          ${outcome}${call.approval ? ` · approval ${call.approval.status}${call.approval.by ? ` by ${call.approval.by}` : ''}` : ''}
        </p>
        <details>
          <summary>Arguments</summary>
          <pre class="content">${inert(call.arguments)}</pre>
        </details>
      </li>`;
    }
    case 'model_request': {
      const cached = e.promptTokens ? Math.round((100 * e.cachedPromptTokens) / e.promptTokens) : 0;
      return html`<li class="entry request">
        <p class="meta">
          ${time(e.at)} · model request · ${inert(e.model)}: ${e.promptTokens} prompt tokens
          (${cached}% cached), ${e.completionTokens} completion${e.cost ? ` · cost ${e.cost}` : ''}
        </p>
      </li>`;
    }
    case 'stop':
      return html`<li class="entry stop">
        <p class="meta">${time(e.at)} · stopped by ${e.by}</p>
      </li>`;
    case 'edit':
      return html`<li class="entry edit">
        <p class="meta">
          ${time(e.at)} · ${e.person} edited the message; the turn was answered again
        </p>
        <div class="content">${inert(e.text)}</div>
      </li>`;
  }
}

/** A conversation's page: everything in it, in the order it happened. */
export function conversationBody(c: ConversationRecord): Html {
  const { platform, workspace, channel, thread } = c.place;
  return html`<p class="meta">
      ${platform} · ${inert(workspace)} · ${inert(channel)} · thread ${inert(thread)}
    </p>
    <ol class="timeline">
      ${c.entries.map(entry)}
    </ol>`;
}

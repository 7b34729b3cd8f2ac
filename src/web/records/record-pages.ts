import type { ChannelScope } from '../../core/ports/conversation.ts';
import type { HistorySearchPort } from '../../core/ports/history.ts';
import { conversationBody } from './conversation-page.ts';
import { redirect, sendPage } from '../http.ts';
import { layout, type Viewer } from '../layout.ts';
import type { Request, WebPages } from '../pages.ts';
import { channelId, searchBody, searchQueryOf, type PlacedHit } from './search-page.ts';
import { WEB_PATH } from '../settings.ts';

/** Hits shown for one search. */
const MAX_HITS = 50;

/**
 * Search, a conversation's page, and /web/open (where a hit or a reply's link leads: a result's
 * page, or its conversation's), on `pages`. Each shows only channels the viewer may read.
 */
export function addRecordPages(pages: WebPages, search: HistorySearchPort): void {
  const { records } = pages.deps;
  const readable = async (viewer: Viewer): Promise<ChannelScope[]> =>
    pages.access.readable(
      viewer,
      await records.channels(viewer.platform, viewer.workspace || undefined),
    );

  pages.page('search', async (r, viewer) => {
    const q = searchQueryOf(r.url.searchParams);
    const channels = await readable(viewer);
    if (!q.text) return sendPage(r.res, 200, layout('Search', searchBody(q, channels), viewer));
    const within = q.channel ? channels.filter((c) => channelId(c) === q.channel) : channels;
    const found = await Promise.all(
      within.map(async (channel) =>
        (
          await search.searchHistory(channel, {
            text: q.text,
            maxResults: MAX_HITS,
            ...(q.days ? { days: q.days } : {}),
            ...(q.tool ? { tool: q.tool } : {}),
            ...(q.server ? { server: q.server } : {}),
            ...(q.person ? { person: q.person } : {}),
          })
        ).map((hit): PlacedHit => ({ ...hit, channel })),
      ),
    );
    const hits = found
      .flat()
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      .slice(0, MAX_HITS);
    sendPage(r.res, 200, layout('Search', searchBody(q, channels, hits), viewer));
  });

  pages.page('conversations', async (r, viewer) => {
    const conversation = await records.conversation(r.parts[1] ?? '');
    if (!conversation || !(await pages.access.mayRead(viewer, conversation.place)))
      return pages.notFound(r, viewer);
    sendPage(r.res, 200, layout('Conversation', conversationBody(conversation), viewer));
  });

  pages.page('open', (r, viewer) => open(pages, r, viewer));
}

/** /web/open?channel=P/W/C&thread=T[&call=ID[&at=N]]: on to the result's or the thread's page. */
async function open(pages: WebPages, r: Request, viewer: Viewer): Promise<void> {
  const { records } = pages.deps;
  const query = r.url.searchParams;
  const [platform = '', workspace = '', ...rest] = (query.get('channel') ?? '').split('/');
  const channel = { platform, workspace, channel: rest.join('/') };
  if (!(await pages.access.mayRead(viewer, channel))) return pages.notFound(r, viewer);
  const call = query.get('call');
  if (call) {
    const id = await records.callIn(channel, call);
    if (!id) return pages.notFound(r, viewer);
    const at = Number(query.get('at'));
    const page =
      Number.isSafeInteger(at) && at > 0 ? Math.floor(at / pages.deps.settings.pageChars) : 0;
    return redirect(
      r.res,
      `${WEB_PATH}/results/${id}${at > 0 ? `?view=text&page=${page}&at=${at}#found` : ''}`,
    );
  }
  const id = await records.conversationAt({ ...channel, thread: query.get('thread') ?? '' });
  if (!id) return pages.notFound(r, viewer);
  redirect(r.res, `${WEB_PATH}/conversations/${id}`);
}

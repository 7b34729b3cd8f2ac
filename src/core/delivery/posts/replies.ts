/** What the delivery engine itself says to people, rather than the turn. */

export const FAILURE_REPLY = 'Sorry, something went wrong on my side. Please try again.';
/**
 * To someone whose message could not be stored, where the platform will not send it again
 * (Discord).
 */
export const NOT_RECORDED_REPLY =
  'I could not take that message: my database is not answering, so nothing of it was saved. Please send it again in a minute.';
/**
 * To a person whose answer the platform refused for good (not a rate limit, not an outage): trying
 * again would be refused again, so they are not asked to; what the platform said is.
 */
export const platformRefusedReply = (platform: string, answer: string) =>
  `Sorry, ${platform} refused my answer (${answer}).`;
/** Under a report whose chart the platform refused: the report stands, the chart is named. */
export const chartRefusedNote = (answer: string) =>
  `I could not attach the chart (${answer}), so here is the report without it.`;
/** Below a reply posted as messages because its file was refused. */
export const fileRefusedNote = (reason: string) =>
  `I could not post this long reply as a file (${reason}), so here it is as messages.`;
/**
 * To a message with no words and no files (a bare mention, an empty forward): nothing is made up
 * for it.
 */
export const NOTHING_TO_READ_REPLY =
  'Your message reached me, but I found nothing in it I can read: no words and no files. What can I do for you?';
export const PROMPT_REFUSED = 'Spool is not enabled for you here.';
/** The reply to a message whose turn a person stopped. */
export const STOPPED_REPLY =
  'Stopped. What I did so far is kept: say "go on" and I will pick up from there.';
/** Below the new answer to an edited message that has answers after it in the thread. */
export const STALE_ANSWERS_NOTE =
  'Answered again for the edited message. The answers after it in this thread were to its earlier words and may be out of date.';
/** What an approval prompt says once a Stop ended its turn: its buttons are gone. */
export const STOPPED_PROMPT = '⏹ Stopped before anyone decided: the call was not run.';
export const NEW_CONVERSATION_REPLY =
  'Started a new conversation here. Earlier ones stay searchable with `/recall`.';

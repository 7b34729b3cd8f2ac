import type { StoredRead } from '../../ports/tools.ts';
import { person } from './approval-text.ts';
import type { TurnActivity } from '../../ports/turns.ts';

/** A status stays short: Slack shows it on one line beside the app's name. */
const MAX_STATUS_CHARS = 100;

/**
 * What a turn is doing, as a phrase people read after Spool's name ("Spool is running
 * ops__deploy"). The one owner of this wording.
 */
export function statusText(activity: TurnActivity): string {
  switch (activity.kind) {
    case 'model':
      return activity.afterTools ? 'writing the answer' : 'thinking';
    case 'tool':
      return activity.reading ? 'reading stored results' : `running ${activity.name}`;
    case 'reading':
      return readingText(activity.read);
    case 'progress': {
      const { progress, total, message } = activity.progress;
      const share = total ? ` (${Math.round((100 * progress) / total)}%)` : '';
      const said = message ? `: ${message}` : '';
      return `running ${activity.name}${said}${share}`.slice(0, MAX_STATUS_CHARS);
    }
  }
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * Which page of a stored result, by this page's size: "reading page 3 of 10 of a stored result
 * (characters 40,000–60,000 of 200,000)"; a search names its pattern.
 */
function readingText(read: StoredRead): string {
  if (read.pattern !== undefined) {
    const pattern = read.pattern.length > 40 ? `${read.pattern.slice(0, 39)}…` : read.pattern;
    const text = `searching a stored result (${count(read.of)} characters) for "${pattern}"`;
    return text.slice(0, MAX_STATUS_CHARS);
  }
  const size = Math.max(1, read.to - read.from);
  const page = Math.ceil(read.from / size) + 1;
  const pages = page + Math.ceil((read.of - read.to) / size);
  const span = `characters ${count(read.from)}–${count(read.to)} of ${count(read.of)}`;
  return `reading page ${page} of ${pages} of a stored result (${span})`;
}

/**
 * A turn parked until its calls are decided: "waiting for approval of ops__deploy from <@U1> or
 * <@U2>"; without approvers, anyone who may talk to Spool there decides.
 */
export function waitingForApproval(
  tools: string[],
  approvers: string[] | undefined,
  platform: string,
): string {
  const names = [...new Set(tools)];
  const of = names.length > 3 ? `${names.length} calls` : names.join(', ');
  const people = (approvers ?? []).map((user) => person(platform, user));
  const from =
    people.length === 0
      ? ''
      : people.length <= 3
        ? ` from ${people.slice(0, -1).join(', ')}${people.length > 1 ? ' or ' : ''}${people.at(-1)}`
        : ` from ${people.slice(0, 2).join(', ')} or ${people.length - 2} others`;
  return `waiting for approval of ${of}${from}`.slice(0, MAX_STATUS_CHARS);
}

/**
 * A turn parked while a server runs its call as a task: "waiting for research (Analyzing
 * content...)", with what the server last said of it.
 */
export function waitingForTask(tool: string, said: string | undefined): string {
  return `waiting for ${tool}${said ? ` (${said})` : ''}`.slice(0, MAX_STATUS_CHARS);
}

/** A turn parked until the person who asked signs in to a tool server as themselves. */
export const waitingForSignIn = (who: string, server: string) =>
  `waiting for ${who} to sign in to ${server}`.slice(0, MAX_STATUS_CHARS);

export const waitingForAnswer = (server: string) => `waiting for an answer to ${server}'s question`;

/** How often a status is shown again where the platform drops it (Slack: after two minutes). */
export const STATUS_REFRESH_MS = 90_000;

/**
 * One turn's status line: shows at most one update per `intervalMs` (the latest wins, shown when
 * the interval is up), the first one only once the turn has run that long (a quick turn shows
 * none: the working indicator said enough), the last one again every `refreshMs` (Slack drops a
 * status after two minutes), and nothing once stopped.
 */
export class StatusLine {
  private latest?: string;
  private shownAt = 0;
  private pending?: NodeJS.Timeout;
  private refresh?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly show: (status: string) => Promise<void>,
    private readonly options: { intervalMs: number; refreshMs: number },
  ) {
    this.shownAt = Date.now();
  }

  set(status: string): void {
    if (this.stopped || status === this.latest) return;
    this.latest = status;
    if (this.pending) return;
    const wait = this.shownAt + this.options.intervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.pending = setTimeout(() => this.flush(), wait);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.pending);
    clearTimeout(this.refresh);
  }

  /** The status shown again once `refreshMs` passes without a change. */
  private refreshLater(): void {
    clearTimeout(this.refresh);
    this.refresh = setTimeout(() => {
      const again = this.latest;
      this.latest = undefined;
      this.shownAt = 0;
      if (again) this.set(again);
    }, this.options.refreshMs);
  }

  private flush(): void {
    this.pending = undefined;
    if (this.stopped || this.latest === undefined) return;
    this.shownAt = Date.now();
    this.refreshLater();
    // A status is an indicator: one the platform refuses changes nothing that matters.
    void this.show(this.latest).catch(() => {});
  }
}

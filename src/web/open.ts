import type { Logger } from '../core/logger.ts';
import type { ChannelAccess } from '../core/ports/platform/channel-access.ts';
import type { PlatformSignIn } from '../core/ports/platform/platform-sign-in.ts';
import type { Database } from '../store/database.ts';
import { PostgresSpendLedger } from '../store/delivery/spend-ledger.ts';
import { WebOperatorRecords } from '../store/transcripts/web-operators.ts';
import { WebRecords } from '../store/transcripts/web-records.ts';
import { WebSessionLedger } from '../store/credentials/web-session-ledger.ts';
import { WebPages } from './pages.ts';
import { addRecordPages } from './records/record-pages.ts';
import { addSignInsPage } from './sign-in/sign-ins-page.ts';
import type { OperatorDeps } from './operators/deps.ts';
import { addOperatorPages } from './operators/operator-pages.ts';
import type { HistorySearchPort } from '../core/ports/history.ts';
import { WEB_PATH, type WebSettings } from './settings.ts';

/**
 * The web pages over the database, or none when WEB_PAGES=false. `access` is filled as each
 * platform starts (`PlatformAdapter.channelAccess`).
 */
export function openWebPages(
  settings: WebSettings,
  db: Database,
  options: {
    signIns: Record<string, PlatformSignIn | 'local'>;
    access: ReadonlyMap<string, ChannelAccess>;
    admins: readonly string[];
    search: HistorySearchPort;
    logger: Logger;
    /** The operator pages' view of the running bot. */
    operators: Omit<OperatorDeps, 'records' | 'spend'>;
  },
): WebPages | undefined {
  if (!settings.enabled) return undefined;
  const { search, operators, ...deps } = options;
  const pages = new WebPages({
    settings,
    sessions: new WebSessionLedger(db.prisma),
    records: new WebRecords(db.prisma),
    ...deps,
  });
  addRecordPages(pages, search);
  addSignInsPage(pages);
  addOperatorPages(pages, {
    ...operators,
    records: new WebOperatorRecords(db.prisma),
    spend: new PostgresSpendLedger(db.pool),
  });
  return pages;
}

/** The pages' address: PUBLIC_URL, else this machine at the server's port. */
export function pagesBase(settings: WebSettings, port: number): string {
  return settings.publicUrl ?? `http://127.0.0.1:${port}`;
}

/**
 * A stored result's page at `base`, by its call's id: the address replies link to. It carries the
 * id alone; the page asks for a sign-in and checks the channel as any page does.
 */
export const resultPage = (base: string) => (toolCallId: string) =>
  `${base}${WEB_PATH}/results/${encodeURIComponent(toolCallId)}`;

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKind } from '../../support/db.ts';
import { FakeOpenAi } from '../../support/fake-openai.ts';
import { PAGE_MARKER_CHARS } from '../../../src/core/markers.ts';
import { DECISIONS, MEETING_CHARS, meetingTranscript } from '../../support/meeting.ts';
import { FILESYSTEM_SERVER, runSpool } from '../../support/process.ts';
import { readerModel } from '../../support/readers.ts';
import { fileDatabaseUrl } from '../../support/file-database.ts';

let fake: FakeOpenAi;
let root: string;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await new FakeOpenAi().start();
  root = await mkdtemp(join(tmpdir(), 'spool-seed-'));
  await writeFile(join(root, 'transcript.txt'), meetingTranscript());
  await writeFile(
    join(root, 'mcp.json'),
    JSON.stringify({
      mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM_SERVER, root] } },
    }),
  );
  const database: Record<string, string> =
    databaseKind() === 'embedded'
      ? { DATA_DIR: join(root, 'data') }
      : { DATABASE_URL: fileDatabaseUrl() };
  // The seed case's settings: TOOL_RESULT_MAX_CHARS=4000, every other setting its default.
  env = {
    OPENAI_BASE_URL: fake.baseURL,
    MCP_CONFIG: join(root, 'mcp.json'),
    TOOL_RESULT_MAX_CHARS: '4000',
    ...database,
  };
});
afterAll(async () => {
  await fake.stop();
  await rm(root, { recursive: true, force: true });
});

/**
 * The reply's lines, sorted, and the line after it: the address of the transcript's whole result,
 * which the model read as a preview, on the local web pages.
 */
const decisionsAndLink = (run: { stdout: string }) => {
  const lines = run.stdout.trim().split('\n');
  return { decisions: lines.slice(0, -1).sort(), link: lines.at(-1) };
};
const pagesOf = (run: { stderr: string }) =>
  /Web pages: (http:\/\/127\.0\.0\.1:\d+)\/web\/local\?key=/.exec(run.stderr)?.[1];
/** Spool's id of the turn's first call, the read of the transcript. */
const readCallOf = (model: FakeOpenAi) =>
  model.requests.at(-1)!.messages.find((m) => m.role === 'tool')!.tool_call_id;

describe('reading a whole document (the seed transcript)', () => {
  const open = () => ({
    id: 'open',
    name: 'fs__read_text_file',
    arguments: JSON.stringify({ path: join(root, 'transcript.txt') }),
  });

  it(`with every setting its default, reads the rest in one page: the window is known`, async () => {
    fake.requests.length = 0;
    fake.fallback = readerModel(open, /DECISION \d+: [^\n]*\./g);
    const run = await runSpool(['chat', '--session', `seed-default-${Date.now()}`], {
      env,
      input: 'List every decision made in the meeting transcript.\n',
    });

    expect(run.code).toBe(0);
    expect(decisionsAndLink(run)).toEqual({
      decisions: [...DECISIONS].sort(),
      link: `View the whole result: ${pagesOf(run)}/web/results/${readCallOf(fake)}`,
    });
    expect(fake.rejections).toEqual([]);
    expect(run.stderr).toContain(
      'Model window: 128,000 tokens (known model "gpt-4o-mini", as gpt-4o)',
    );
    // The read, the one page that holds the rest, the answer.
    expect(fake.requests).toHaveLength(3);
    const final = fake.requests.at(-1)!.messages;
    expect(final.filter((m) => m.role === 'tool')).toHaveLength(2);
    expect(final.at(-1)!.content).toMatch(
      new RegExp(`you have all ${MEETING_CHARS} chars of it in view\\.\\]$`),
    );
  });

  it(`lists all ${DECISIONS.length} decisions of a ${MEETING_CHARS}-char transcript it paged through, in a real spool chat process with the filesystem server`, async () => {
    fake.requests.length = 0;
    fake.fallback = readerModel(open, /DECISION \d+: [^\n]*\./g);
    const run = await runSpool(['chat', '--session', `seed-${Date.now()}`], {
      // Pages the preview's size (CONTINUATION_CHUNK_CHARS), as they were with the window unknown.
      env: { ...env, CONTINUATION_CHUNK_CHARS: String(4_000 - PAGE_MARKER_CHARS) },
      input: 'List every decision made in the meeting transcript.\n',
    });

    expect(run.code).toBe(0);
    expect(decisionsAndLink(run)).toEqual({
      decisions: [...DECISIONS].sort(),
      link: `View the whole result: ${pagesOf(run)}/web/results/${readCallOf(fake)}`,
    });
    expect(fake.rejections).toEqual([]);
    // It got there by paging, a page per request, until all of it was in view; no page re-sent
    // what the request showed already, but for the last, which meets the preview's tail.
    const final = fake.requests.at(-1)!.messages;
    const pages = final.filter((m) => m.role === 'tool').slice(1);
    expect(pages.length).toBeGreaterThanOrEqual(6);
    expect(pages.slice(0, -1).filter((m) => /in view above\]/.test(m.content ?? ''))).toEqual([]);
    expect(final.at(-1)!.content).toMatch(
      new RegExp(`you have all ${MEETING_CHARS} chars of it in view\\.\\]$`),
    );
  });
});

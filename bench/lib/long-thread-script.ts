/**
 * The long-thread benchmark's workspace and its one thread of turns, deterministic (seeded) so
 * that every run asks the same things of the same text.
 *
 * The workspace is the context benchmark's (bench/lib/context-files.ts) and, beside it, the small
 * files a thread mostly reads: excerpts of those logs, CSVs, diffs and transcripts, and JSON
 * cut from its export, each with a fact of its own.
 */
import fc from 'fast-check';
import { LONG_THREAD_ASKS } from '../../test/support/long-thread-model.ts';
import { workspaceFiles, type Fact } from './context-files.ts';

export type TurnKind = 'read' | 'grep' | 'back-reference' | 'small talk';

export interface ThreadTurn {
  kind: TurnKind;
  text: string;
  /** The document it asks about; none for small talk. */
  file?: string;
  /** What a right answer holds: every fact of a document read, else the one fact asked for. */
  expect: string[];
}

const SEED = 36;

/** Excerpts: path, the workspace file it is cut from, its size in chars, the fact planted in it. */
const EXCERPTS: Array<[path: string, from: string, chars: number, name: string, value: string]> = [
  ['deploy.log', 'app.log', 6_000, 'deploy-sha', '9f3c2ab'],
  ['cron.log', 'api.log', 3_000, 'nightly-job', '02:15 UTC'],
  ['errors.log', 'worker.log', 14_000, 'top-error', 'ETIMEDOUT upstream'],
  ['ci.log', 'app.log', 22_000, 'flaky-test', 'checkout.spec.ts'],
  ['users.csv', 'export.csv', 8_000, 'admin-user', 'u-77120'],
  ['refunds.csv', 'export.csv', 12_000, 'refund-batch', 'RB-0412'],
  ['hotfix.diff', 'change.diff', 5_000, 'hotfix-flag', 'DISABLE_LEGACY_SYNC'],
  ['standup.txt', 'transcript.txt', 3_000, 'standup-owner', 'Chen'],
  ['retro.txt', 'transcript.txt', 9_000, 'retro-action', 'pin the CI image'],
  ['src/retry.ts', 'src/module2.ts', 4_000, 'backoff-base', '250 ms'],
];
/** JSON cut from the export: path, records, the fact planted in it. */
const JSON_EXCERPTS: Array<[path: string, records: number, name: string, value: string]> = [
  ['config.json', 12, 'db-pool-size', '48 connections'],
  ['alerts.json', 60, 'pager-rotation', 'team-orion'],
  ['metrics.json', 120, 'p99-latency', '412 ms'],
  ['orders.json', 200, 'order-hold', 'ORD-55810'],
];

const depthOf = (n: number) => [0.3, 0.5, 0.7, 0.9][n % 4]!;
const factLine = (name: string, value: string) => `FACT ${name}: ${value}`;

/** Whole lines of `text` up to `chars`, none of its own facts, and this one put in at `depth`. */
function excerpt(text: string, chars: number, fact: string, depth: number): string {
  const lines = text
    .slice(0, chars)
    .split('\n')
    .slice(0, -1)
    .filter((l) => !l.includes('FACT '));
  lines.splice(Math.floor(depth * lines.length), 0, fact);
  return `${lines.join('\n')}\n`;
}

export function threadFiles(): { files: Record<string, string>; facts: Fact[] } {
  const { files, facts } = workspaceFiles();
  const records = (JSON.parse(files['export.json']!) as Array<{ id: number }>).filter(
    (r) => r.id >= 0,
  );
  for (const [n, [path, from, chars, name, value]] of EXCERPTS.entries()) {
    files[path] = excerpt(files[from]!, chars, factLine(name, value), depthOf(n));
    facts.push({ file: path, name, value });
  }
  for (const [n, [path, count, name, value]] of JSON_EXCERPTS.entries()) {
    const cut: object[] = records.slice(0, count);
    cut.splice(Math.floor(depthOf(n) * count), 0, { id: -1, note: factLine(name, value) });
    files[path] = JSON.stringify(cut, null, 1);
    facts.push({ file: path, name, value });
  }
  return { files, facts };
}

/** The mix of the thread's 100 turns. */
const MIX: Record<TurnKind, number> = {
  read: 35,
  grep: 20,
  'back-reference': 15,
  'small talk': 30,
};
const SMALL_TALK = [
  'thanks',
  'ok',
  'got it',
  'nice, that helps',
  'good morning!',
  'haha, fair enough',
  'one sec, getting coffee',
  'perfect',
  'cool, that matches what I thought',
  'how is your day going?',
];
/** Files a person asks to have read whole: all but the 2 MB log, which is only ever grepped. */
const UNREADABLE = new Set(['huge.log']);

const shuffled = <T>(items: T[], seed: number): T[] =>
  fc.sample(fc.shuffledSubarray(items, { minLength: items.length, maxLength: items.length }), {
    seed,
    numRuns: 1,
  })[0]!;
const picks = (seed: number, count: number): number[] =>
  fc.sample(fc.noBias(fc.nat({ max: 1_000_000 })), { seed, numRuns: count });

/**
 * The thread: its kinds in a seeded order; reads of every readable file in a seeded order, then
 * again of small ones; greps for facts in a seeded order; back-references to facts read or
 * grepped at least two turns before (one that comes before any is put off to the next small talk);
 * small talk from a fixed round of lines.
 */
export function threadTurns(facts: Fact[], files: Record<string, string>): ThreadTurn[] {
  const kinds = shuffled(
    Object.entries(MIX).flatMap(([kind, n]) => Array<TurnKind>(n).fill(kind as TurnKind)),
    SEED,
  );
  const readable = Object.keys(files).filter(
    (path) => !UNREADABLE.has(path) && facts.some((f) => f.file === path),
  );
  const small = readable.filter((path) => files[path]!.length <= 25_000);
  const reads = [...shuffled(readable, SEED + 1), ...shuffled(small, SEED + 2)];
  const greps = shuffled(facts, SEED + 3);
  const pick = picks(SEED + 4, kinds.length);
  const seen: Array<{ turn: number; fact: Fact }> = [];
  const referred = new Set<Fact>();
  let owed = 0;
  let talks = 0;
  const turns: ThreadTurn[] = [];
  const backReference = (i: number): ThreadTurn | undefined => {
    const earlier = seen.filter((s) => s.turn <= i - 2).map((s) => s.fact);
    const fresh = earlier.filter((f) => !referred.has(f));
    const from = fresh.length ? fresh : earlier;
    const fact = from[pick[i]! % from.length];
    if (!fact) return undefined;
    referred.add(fact);
    const text = LONG_THREAD_ASKS.backReference(fact.file, fact.name);
    return { kind: 'back-reference', text, file: fact.file, expect: [fact.value] };
  };
  for (const [i, kind] of kinds.entries()) {
    let turn: ThreadTurn | undefined;
    if (kind === 'read') {
      const path = reads.shift()!;
      const held = facts.filter((f) => f.file === path);
      seen.push(...held.map((fact) => ({ turn: i, fact })));
      turn = {
        kind,
        text: LONG_THREAD_ASKS.read(path),
        file: path,
        expect: held.map((f) => f.value),
      };
    } else if (kind === 'grep') {
      const fact = greps.shift()!;
      seen.push({ turn: i, fact });
      turn = {
        kind,
        text: LONG_THREAD_ASKS.grep(fact.file, fact.name),
        file: fact.file,
        expect: [fact.value],
      };
    } else if (kind === 'back-reference' || owed > 0) {
      turn = backReference(i);
      if (kind === 'back-reference' && !turn) owed++;
      else if (kind !== 'back-reference' && turn) owed--;
    }
    turns.push(
      turn ?? { kind: 'small talk', text: SMALL_TALK[talks++ % SMALL_TALK.length]!, expect: [] },
    );
  }
  return turns;
}

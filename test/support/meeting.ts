/**
 * The seed case of "read the whole document": a 24,591-char meeting transcript with 12 decisions
 * spread through it, deterministic, so every run reads the same text. Two decisions fall in a
 * 4,000-char preview's head and one in its tail; the other nine only paging reaches.
 */

export const MEETING_CHARS = 24_591;

const SPEAKERS = ['Ana', 'Ben', 'Chen', 'Dara'];
const TOPICS = [
  'the roadmap',
  'the hiring plan',
  'the budget review',
  'the on-call rota',
  'the migration',
  'the launch checklist',
];
const DEPTHS = [0.02, 0.1, 0.2, 0.28, 0.36, 0.45, 0.53, 0.62, 0.7, 0.79, 0.88, 0.985];

export const DECISIONS = [
  'ship v2.3 on 4 December',
  'freeze the public API until January',
  'hire two SREs in Lisbon',
  'move CI to the new runners',
  'retire the legacy billing export',
  'Chen owns the incident review',
  'raise the error budget to 0.5%',
  'drop Python 3.9 support',
  'weekly demos move to Thursday',
  'keep the Postgres 15 fleet until June',
  'publish the postmortem externally',
  'budget 40k for the security audit',
].map((text, i) => `DECISION ${i + 1}: ${text}.`);

export function meetingTranscript(): string {
  const said = DECISIONS.map((d) => `Ben: ${d}`);
  const lines: string[] = [];
  let chars = said.reduce((n, line) => n + line.length + 1, 0);
  for (let i = 0; chars < MEETING_CHARS; i++) {
    lines.push(
      `${SPEAKERS[i % 4]}: on ${TOPICS[(i * 7) % 6]}, point ${i}, we went over the open questions and the numbers again.`,
    );
    chars += lines.at(-1)!.length + 1;
  }
  // The last line, never a decision, is cut so that the text is exactly MEETING_CHARS long.
  const last = lines.pop()!;
  lines.push(last.slice(0, last.length - (chars - MEETING_CHARS)));
  DEPTHS.forEach((depth, i) => lines.splice(Math.floor(depth * lines.length), 0, said[i]!));
  return `${lines.join('\n')}\n`;
}

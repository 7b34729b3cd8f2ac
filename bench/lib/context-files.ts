/**
 * The workspace of the context benchmark: realistic large outputs, each with facts planted at
 * known depths ("FACT <name>: <value>"), deterministic so that every run reads the same text.
 */

export interface Fact {
  file: string;
  name: string;
  value: string;
}

/** `lines(i)` repeated until `chars`, with each fact's line put in at its depth (0..1). */
function build(
  chars: number,
  line: (i: number) => string,
  planted: Array<[depth: number, text: string]>,
): string {
  const out: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    out.push(line(i));
    length += out.at(-1)!.length + 1;
  }
  for (const [depth, text] of planted)
    out.splice(Math.min(out.length, Math.floor(depth * out.length)), 0, text);
  return `${out.join('\n')}\n`;
}

export function workspaceFiles(): { files: Record<string, string>; facts: Fact[] } {
  const facts: Fact[] = [];
  const plant = (
    file: string,
    name: string,
    value: string,
    depth: number,
    wrap = (t: string) => t,
  ): [number, string] => {
    facts.push({ file, name, value });
    return [depth, wrap(`FACT ${name}: ${value}`)];
  };
  const hex = (i: number) => ((i * 2654435761) >>> 0).toString(16).padStart(8, '0');
  const logLine = (service: string) => (i: number) =>
    `2026-11-0${1 + (i % 9)}T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07Z INFO ${service} req=${hex(i)} status=200 latency_ms=${i % 97} path=/v1/items/${i % 500}`;
  const files: Record<string, string> = {
    'transcript.txt': build(
      25_000,
      (i) =>
        `${['Ana', 'Ben', 'Chen'][i % 3]}: point ${i} about the roadmap, the hiring plan and the budget review`,
      [plant('transcript.txt', 'offsite-room', 'Aurora-4', 0.6)],
    ),
    'export.json': JSON.stringify(
      JSON.parse(
        `[${build(120_000, (i) => `{"id":${i},"customer":"c-${hex(i)}","amount":${(i * 37) % 1000}.50,"note":"ok"},`, [plant('export.json', 'invoice-total', '88231.40 EUR', 0.8, (t) => `{"id":-1,"note":"${t}"},`)]).slice(0, -2)}]`,
      ),
      null,
      1,
    ),
    'app.log': build(40_000, logLine('app'), [plant('app.log', 'app-crash-id', 'E-5521', 0.5)]),
    'api.log': build(60_000, logLine('api'), [
      plant('api.log', 'api-rate-limit', '4,200 req/min', 0.95),
    ]),
    'worker.log': build(90_000, logLine('worker'), [
      plant('worker.log', 'worker-shard', 'shard-17', 0.4),
      plant('worker.log', 'worker-queue', 'billing-retry', 0.7),
    ]),
    'change.diff': build(
      40_000,
      (i) =>
        i % 7 === 0
          ? `@@ -${i},7 +${i},8 @@ function handler${i}()`
          : `${i % 2 ? '+' : '-'}  const value${i} = compute(${i}, options);`,
      [plant('change.diff', 'flag-name', 'ENABLE_FAST_SYNC', 0.3, (t) => `+  // ${t}`)],
    ),
    'export.csv': build(
      200_000,
      (i) =>
        `${i},c-${hex(i)},${(i * 31) % 1000}.25,EUR,paid,2026-10-${String(1 + (i % 28)).padStart(2, '0')}`,
      [
        plant('export.csv', 'refund-ref', 'RF-20931', 0.55),
        plant('export.csv', 'late-customer', 'c-ffd0e11a', 0.95),
      ],
    ),
    'huge.log':
      build(2_000_000, logLine('batch'), []) + 'FACT batch-result: 1,204,883 rows exported\n',
  };
  facts.push({ file: 'huge.log', name: 'batch-result', value: '1,204,883 rows exported' });
  for (let n = 0; n < 12; n++) {
    const path = `src/module${n}.ts`;
    files[path] = build(
      16_000 + n * 1_200,
      (i) =>
        `export function step${n}_${i}(input: Input): Output {\n  return transform(input, ${i});\n}`,
      n === 9 ? [plant(path, 'retry-limit', '7 attempts', 0.85, (t) => `// ${t}`)] : [],
    );
  }
  return { files, facts };
}

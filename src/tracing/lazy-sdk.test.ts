import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The specifiers a file imports at run time: no `import type`, no `import()` (loaded on demand). */
function staticImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  return source.statements.flatMap((node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const typesOnly =
        clause &&
        (clause.isTypeOnly ||
          (!clause.name &&
            bindings &&
            ts.isNamedImports(bindings) &&
            bindings.elements.every((e) => e.isTypeOnly)));
      return typesOnly ? [] : [(node.moduleSpecifier as ts.StringLiteral).text];
    }
    if (ts.isExportDeclaration(node) && node.moduleSpecifier && !node.isTypeOnly)
      return [(node.moduleSpecifier as ts.StringLiteral).text];
    return [];
  });
}

/** Every module `entry` loads before it runs: files of src/ and packages, by their specifiers. */
function loadedAtStart(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
      else packages.add(specifier);
    }
  };
  visit(resolve(SRC, entry));
  return { files, packages };
}

describe('the OpenTelemetry SDK', () => {
  it('is not among what the bot loads at start: only tracing on loads it, on demand', () => {
    const { files, packages } = loadedAtStart('main.ts');
    // The walk does reach tracing: the switch and the side the app calls.
    expect(files).toContain(resolve(SRC, 'tracing.ts'));
    expect(files).toContain(resolve(SRC, 'tracing/api.ts'));
    expect(files).not.toContain(resolve(SRC, 'tracing/sdk.ts'));
    expect(files).not.toContain(resolve(SRC, 'tracing/spans.ts'));
    const sdk = [...packages].filter(
      (p) => p.startsWith('@opentelemetry/') && p !== '@opentelemetry/api',
    );
    expect(sdk).toEqual([]);
  });

  it('is what tracing/sdk.ts loads, so the check above looks in the right place', () => {
    const { packages } = loadedAtStart('tracing/sdk.ts');
    expect(packages).toContain('@opentelemetry/sdk-trace');
    expect(packages).toContain('@opentelemetry/exporter-trace-otlp-http');
  });
});

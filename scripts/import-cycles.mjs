// No import circles: every relative import in the given folders (default src/), followed as madge
// does. Type-only imports count (`import type`, `export type … from`, `import('…').T`), and so do
// dynamic `import()`s: a module that only names another's type still cannot be read, moved or
// tested without it. ESLint's import/no-cycle skips type-only imports, so it misses those circles.
// Usage: node scripts/import-cycles.mjs [folder…]; exits 1 and names each circle found.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SOURCE = /\.(ts|mts|cts|tsx|js|mjs|cjs)$/;
const SKIP = new Set(['node_modules', 'generated', 'dist']);

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIP.has(entry.name) ? [] : sourceFiles(full);
    return SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Every module specifier a file names: imports, re-exports, `import()` and `import('…')` types. */
function specifiers(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found = [];
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      found.push(node.moduleSpecifier.text);
    else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    )
      found.push(node.moduleReference.expression.text);
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      found.push(node.arguments[0].text);
    else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    )
      found.push(node.argument.literal.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The file a relative specifier names, if it is one of `known`. */
function resolve(from, specifier, known) {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    base.replace(/\.cjs$/, '.cts'),
    `${base}.ts`,
    path.join(base, 'index.ts'),
  ];
  return candidates.find((candidate) => known.has(candidate));
}

/**
 * Depth first from every file in turn, as madge does: an edge back to a file still on the path
 * closes a circle, reported once as the path from that file round to it again.
 */
function circles(graph) {
  const done = new Set();
  const onPath = [];
  const found = [];
  const visit = (file) => {
    onPath.push(file);
    for (const next of graph.get(file)) {
      const at = onPath.indexOf(next);
      if (at >= 0) found.push([...onPath.slice(at), next]);
      else if (!done.has(next)) visit(next);
    }
    onPath.pop();
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) visit(file);
  return found;
}

const root = process.cwd();
const folders = process.argv.length > 2 ? process.argv.slice(2) : ['src'];
const files = folders
  .map((folder) => path.resolve(root, folder))
  .filter((folder) => statSync(folder, { throwIfNoEntry: false })?.isDirectory())
  .flatMap(sourceFiles)
  .sort();
const known = new Set(files);
const graph = new Map(
  files.map((file) => [
    file,
    [...new Set(specifiers(file).map((s) => resolve(file, s, known)))].filter(Boolean).sort(),
  ]),
);
const found = circles(graph);
const name = (file) => path.relative(root, file);
if (found.length > 0) {
  console.error(
    `${found.length} import circle${found.length === 1 ? '' : 's'} in ${folders.join(', ')} ` +
      '(type-only and dynamic imports count; move what both sides share to a module both import):',
  );
  for (const circle of found) console.error(`  ${circle.map(name).join(' → ')}`);
  process.exit(1);
}
console.log(`No import circles among ${files.length} files in ${folders.join(', ')}.`);

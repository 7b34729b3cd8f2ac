// Every link of the README and of docs/ leads somewhere: a relative link to a file or folder of the
// repository, an #anchor to a heading of its page (slugged as GitHub slugs it), and a code span that
// names a file of the repository (`src/llm/usage.ts`) to one that exists. Links to other sites are
// not followed: the tests run offline. scripts/check-links.test.ts runs it in `npm test`.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import fromMarkdown from 'mdast-util-from-markdown';

/** A link, anchor or named file that leads nowhere, where it is written. */
export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** What the check reads: a page's text, and whether a path of the repository exists. */
export interface Repository {
  /** The text of a Markdown file, by its path from the repository's root; undefined if there is none. */
  readPage(file: string): string | undefined;
  /** Whether a file or folder exists at a path from the repository's root. */
  exists(file: string): boolean;
}

interface MarkdownNode {
  type: string;
  url?: string;
  value?: string;
  children?: MarkdownNode[];
  position?: { start: { line: number } };
}

/** A code span read as a path of the repository: a top folder's file, with nothing to fill in. */
const NAMED_FILE = /^(?:src|test|scripts|bench|docs|prisma|workspace|\.ci)\/[\w./-]*$/;
/** An address with a scheme (https:, mailto:) or a protocol-relative one: another site's. */
const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;
/** GitHub's anchor for a line or lines of a file that is not Markdown. */
const LINE_ANCHOR = /^L\d+(?:-L\d+)?$/;

function walk(node: MarkdownNode, visit: (node: MarkdownNode) => void): void {
  visit(node);
  for (const child of node.children ?? []) walk(child, visit);
}

function textOf(node: MarkdownNode): string {
  return node.value ?? (node.children ?? []).map(textOf).join('');
}

function parse(text: string): MarkdownNode {
  return fromMarkdown(text) as MarkdownNode;
}

/** The anchors GitHub gives a page's headings, repeats numbered as it numbers them. */
function anchorsOf(tree: MarkdownNode): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  walk(tree, (node) => {
    if (node.type === 'heading') anchors.add(slugger.slug(textOf(node)));
  });
  return anchors;
}

/** Checks the given pages (paths from the repository's root) against the repository. */
export function brokenLinks(pages: string[], repository: Repository): BrokenLink[] {
  // Each page is parsed once, whether it is checked, linked to, or both.
  const trees = new Map<string, MarkdownNode | undefined>();
  const treeOf = (file: string) => {
    if (!trees.has(file)) {
      const text = repository.readPage(file);
      trees.set(file, text === undefined ? undefined : parse(text));
    }
    return trees.get(file);
  };
  const anchorsByPage = new Map<string, Set<string>>();
  const anchorsOfPage = (file: string) => {
    const tree = treeOf(file);
    if (tree && !anchorsByPage.has(file)) anchorsByPage.set(file, anchorsOf(tree));
    return anchorsByPage.get(file);
  };

  const problemWith = (page: string, target: string): string | undefined => {
    const hash = target.indexOf('#');
    const address = decodeURI(hash < 0 ? target : target.slice(0, hash));
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const file =
      address === '' ? page : path.posix.join(path.posix.dirname(page), address).replace(/\/$/, '');
    if (file.startsWith('..')) return 'leads out of the repository';
    if (!repository.exists(file)) return `${file} does not exist`;
    if (anchor === undefined) return undefined;
    if (!file.endsWith('.md')) return LINE_ANCHOR.test(anchor) ? undefined : 'no such line anchor';
    return anchorsOfPage(file)?.has(anchor) ? undefined : `${file} has no heading #${anchor}`;
  };

  const broken: BrokenLink[] = [];
  for (const page of pages) {
    const tree = treeOf(page);
    if (tree === undefined) throw new Error(`${page} does not exist`);
    walk(tree, (node) => {
      const line = node.position?.start.line ?? 0;
      const linked = node.type === 'link' || node.type === 'image' || node.type === 'definition';
      if (linked && node.url !== undefined && !EXTERNAL.test(node.url)) {
        const reason = problemWith(page, node.url);
        if (reason) broken.push({ file: page, line, target: node.url, reason });
      }
      if (node.type === 'inlineCode' && NAMED_FILE.test(node.value!)) {
        if (!repository.exists(node.value!))
          broken.push({ file: page, line, target: node.value!, reason: 'names no file' });
      }
    });
  }
  return broken;
}

/** The repository at `root`, read from disk. */
export function repositoryAt(root: string): Repository {
  return {
    readPage: (file) => {
      const full = path.join(root, file);
      return existsSync(full) ? readFileSync(full, 'utf8') : undefined;
    },
    exists: (file) => existsSync(path.join(root, file)),
  };
}

/** The pages a reader is sent to: the README and every page of docs/. */
export function documentationPages(root: string): string[] {
  const docs = readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md'));
  return ['README.md', ...docs.sort().map((name) => `docs/${name}`)];
}

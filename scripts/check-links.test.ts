import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { brokenLinks, documentationPages, repositoryAt, type Repository } from './check-links.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A repository of the given files (folders are the paths that hold them). */
function repositoryOf(files: Record<string, string>): Repository {
  const paths = Object.keys(files);
  return {
    readPage: (file) => files[file],
    exists: (file) => paths.some((p) => p === file || p.startsWith(`${file}/`)),
  };
}

describe('the links of the README and docs/', () => {
  it('every relative link, anchor and named file leads somewhere', () => {
    const pages = documentationPages(ROOT);
    expect(pages).toContain('docs/operating-and-configuration.md');
    // On failure, each entry names the file, the line and the target that leads nowhere.
    expect(brokenLinks(pages, repositoryAt(ROOT))).toEqual([]);
    // Parsing some 2,000 lines of Markdown takes about 2 s on a busy two-core machine.
  }, 30_000);
});

describe('brokenLinks', () => {
  it('reports a missing file, a missing anchor and a code span naming no file, each where it is', () => {
    const repository = repositoryOf({
      'README.md': [
        '# Spool',
        '',
        'See [Slack](docs/slack.md#set-up) and [Discord](docs/discord.md).',
        '',
        'The engine is `src/core/engine.ts`.',
      ].join('\n'),
      'docs/slack.md': '# Slack\n\n## Setup\n',
    });
    expect(brokenLinks(['README.md', 'docs/slack.md'], repository)).toEqual([
      {
        file: 'README.md',
        line: 3,
        target: 'docs/slack.md#set-up',
        reason: 'docs/slack.md has no heading #set-up',
      },
      {
        file: 'README.md',
        line: 3,
        target: 'docs/discord.md',
        reason: 'docs/discord.md does not exist',
      },
      { file: 'README.md', line: 5, target: 'src/core/engine.ts', reason: 'names no file' },
    ]);
  });

  it('takes the links GitHub resolves: its slugs, numbered repeats, pages up, folders, line anchors', () => {
    const repository = repositoryOf({
      'README.md': [
        '# Spool',
        '',
        '## Tools (MCP) and `mcp.json`',
        '## Usage',
        '## Usage',
        '',
        '[a](#tools-mcp-and-mcpjson) [b](#usage-1) [c][ref] [d](src/) [e](src/a.ts#L3-L9)',
        '[f](https://example.com/x#nowhere) <https://example.com>',
        '',
        '[ref]: docs/page.md#café',
        '',
        '```md',
        '[not a link](nowhere.md) `src/nowhere.ts`',
        '```',
      ].join('\n'),
      'docs/page.md': '# Page\n\n## Café\n\n[up](../README.md#usage) `src/a.ts`',
      'src/a.ts': '',
    });
    expect(brokenLinks(['README.md', 'docs/page.md'], repository)).toEqual([]);
  });

  it('reports a link out of the repository and an anchor on a file that is not a page', () => {
    const repository = repositoryOf({
      'docs/page.md': '# Page\n\n[a](../../x.md) [b](../src/a.ts#top)',
      'src/a.ts': '',
    });
    expect(brokenLinks(['docs/page.md'], repository)).toEqual([
      {
        file: 'docs/page.md',
        line: 3,
        target: '../../x.md',
        reason: 'leads out of the repository',
      },
      { file: 'docs/page.md', line: 3, target: '../src/a.ts#top', reason: 'no such line anchor' },
    ]);
  });
});

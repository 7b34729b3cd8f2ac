import { safeSlice } from '../../core/text.ts';

const FENCE = /^\s*(```|~~~)/;

interface Block {
  lines: string[];
  /** For a code block: its opening and closing fence lines. */
  fence?: { open: string; close: string };
}

/** Paragraphs (runs of non-blank lines) and whole code blocks, in order. */
function parseBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  let code: { open: string; body: string[] } | undefined;
  const endParagraph = () => {
    if (paragraph.length) blocks.push({ lines: paragraph });
    paragraph = [];
  };
  for (const line of text.split('\n')) {
    if (code) {
      if (FENCE.test(line)) {
        blocks.push({ lines: code.body, fence: { open: code.open, close: line } });
        code = undefined;
      } else code.body.push(line);
    } else if (FENCE.test(line)) {
      endParagraph();
      code = { open: line, body: [] };
    } else if (line.trim() === '') endParagraph();
    else paragraph.push(line);
  }
  endParagraph();
  // An unclosed fence still renders as code to the end: close it.
  if (code)
    blocks.push({
      lines: code.body,
      fence: { open: code.open, close: code.open.trimStart().startsWith('~~~') ? '~~~' : '```' },
    });
  return blocks;
}

const render = (block: Block, lines = block.lines) =>
  (block.fence ? [block.fence.open, ...lines, block.fence.close] : lines).join('\n');

/** Cuts one over-long line at whitespace where possible, never inside a surrogate pair. */
function splitLongLine(line: string, limit: number): string[] {
  const pieces: string[] = [];
  let rest = line;
  while (rest.length > limit) {
    let cut = rest.lastIndexOf(' ', limit);
    if (cut < limit / 2) cut = limit;
    // A piece that began with ``` would read as a fence: cut before the last non-blank character
    // instead.
    while (cut > 1 && FENCE.test(rest.slice(cut).replace(/^ /, ''))) cut--;
    const piece = safeSlice(rest, 0, cut);
    pieces.push(piece);
    rest = rest.slice(piece.length).replace(/^ /, '');
  }
  pieces.push(rest);
  return pieces;
}

/** A block too big for one message, as pieces that each fit; code pieces get their own fences. */
function splitBlock(block: Block, limit: number): string[] {
  const overhead = block.fence ? block.fence.open.length + block.fence.close.length + 2 : 0;
  const room = limit - overhead;
  const pieces: string[] = [];
  let lines: string[] = [];
  let size = 0;
  for (const line of block.lines.flatMap((l) => (l.length > room ? splitLongLine(l, room) : [l]))) {
    if (lines.length > 0 && size + 1 + line.length > room) {
      pieces.push(render(block, lines));
      lines = [];
      size = 0;
    }
    size += (lines.length ? 1 : 0) + line.length;
    lines.push(line);
  }
  if (lines.length) pieces.push(render(block, lines));
  return pieces;
}

/**
 * Splits a reply into messages of at most `limit` characters, in order: whole paragraphs and
 * code blocks where they fit, else line by line. A code block that must be split is closed at
 * the end of one message and reopened, with its language, at the start of the next.
 */
export function splitMessage(text: string, limit: number): string[] {
  if (text.length <= limit) return [text];
  const chunks: string[] = [];
  let current = '';
  for (const block of parseBlocks(text)) {
    const rendered = render(block);
    if (current && current.length + 2 + rendered.length <= limit) {
      current += `\n\n${rendered}`;
      continue;
    }
    if (current) chunks.push(current);
    const pieces = rendered.length <= limit ? [rendered] : splitBlock(block, limit);
    chunks.push(...pieces.slice(0, -1));
    current = pieces[pieces.length - 1] ?? '';
  }
  if (current) chunks.push(current);
  return chunks;
}

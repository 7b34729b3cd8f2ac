import type { FileReader } from '../core/ports/files.ts';
import { pdfText } from './pdf-text.ts';
import type { InboundFile } from '../core/ports/platform/delivery.ts';
import type { BinaryPart, ToolOutcome } from '../core/ports/tools.ts';
import { errorMessage } from '../core/errors.ts';

/** Types read as text whatever their `text/` prefix says: data and code formats people share. */
const TEXT_TYPES =
  /^(text\/|application\/(json|xml|csv|x-yaml|yaml|x-sh|javascript|x-ndjson|sql|toml|x-log)\b)/;
const TEXT_EXTENSIONS =
  /\.(txt|log|md|csv|tsv|json|jsonl|ndjson|ya?ml|xml|html?|css|ts|tsx|js|mjs|cjs|py|rb|go|rs|java|kt|c|h|cc|cpp|hpp|cs|php|sh|bash|zsh|sql|toml|ini|conf|cfg|env|diff|patch|tf|gradle|properties|trace)$/i;

export type FileKind = 'text' | 'pdf' | 'image' | 'other';

/** What a file is, by its declared type and name, and failing those by its bytes. */
export function kindOf(file: Pick<InboundFile, 'name' | 'mimeType'>, bytes: Uint8Array): FileKind {
  const type = file.mimeType?.toLowerCase() ?? '';
  if (type === 'application/pdf' || /\.pdf$/i.test(file.name)) return 'pdf';
  if (type.startsWith('image/')) return 'image';
  if (TEXT_TYPES.test(type) || TEXT_EXTENSIONS.test(file.name)) return 'text';
  return looksLikeText(bytes) ? 'text' : 'other';
}

/** No NUL byte and valid UTF-8 in its first 8 kB (a cut at the end of that window is forgiven). */
function looksLikeText(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 8_192);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

const described = (
  file: InboundFile,
  what: string,
  bytes: Uint8Array,
  kind: string,
  binaryMaxBytes: number,
): ToolOutcome => {
  const kept = bytes.length <= binaryMaxBytes;
  const binary: BinaryPart = {
    kind,
    mimeType: file.mimeType,
    sizeBytes: bytes.length,
    ...(kept ? { base64: Buffer.from(bytes).toString('base64') } : {}),
  };
  const stored = kept
    ? 'its bytes are stored'
    : `its bytes are over the ${binaryMaxBytes}-byte limit, so only this description is stored`;
  return {
    content: `[${what} "${file.name}", ${file.mimeType ?? 'of unknown type'}, ${bytes.length} bytes: ${stored}.]`,
    isError: false,
    binaries: [binary],
  };
};

/**
 * Shared files as results the model reads: text as it is, decoded as UTF-8 (the store makes it
 * well-formed); a PDF's text layer; an image or any other file described, with its bytes kept up
 * to `binaryMaxBytes`, as a tool's binary output is.
 */
export function fileReader(options: { binaryMaxBytes: number; pdfTimeoutMs?: number }): FileReader {
  return {
    async read(file, bytes) {
      switch (kindOf(file, bytes)) {
        case 'text':
          return { content: new TextDecoder('utf-8').decode(bytes), isError: false };
        case 'pdf':
          try {
            const pages = await pdfText(bytes, options.pdfTimeoutMs);
            const text = pages.map((page, i) => `[page ${i + 1}]\n${page.trim()}`).join('\n\n');
            if (pages.some((page) => page.trim())) return { content: text, isError: false };
            return described(
              file,
              'PDF with no text layer (a scan?)',
              bytes,
              'pdf',
              options.binaryMaxBytes,
            );
          } catch (error) {
            return {
              ...described(
                file,
                `PDF that could not be read (${errorMessage(error)})`,
                bytes,
                'pdf',
                options.binaryMaxBytes,
              ),
              isError: true,
            };
          }
        case 'image':
          return described(file, 'image', bytes, 'image', options.binaryMaxBytes);
        case 'other':
          return described(file, 'file that is not text', bytes, 'blob', options.binaryMaxBytes);
      }
    },
  };
}

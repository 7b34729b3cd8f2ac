import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

const PDFJS = pathToFileURL(
  createRequire(import.meta.url).resolve('pdfjs-dist/legacy/build/pdf.mjs'),
).href;

/** Runs in a worker: pdf.js over the bytes, page by page; posts the pages' text or the error. */
const EXTRACT = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.pdfjs).then(async ({ getDocument }) => {
  // Fonts are not rendered and no code is evaluated: only the text is wanted.
  const document = await getDocument({ data: workerData.bytes, isEvalSupported: false, disableFontFace: true, verbosity: 0 }).promise;
  const pages = [];
  for (let number = 1; number <= document.numPages; number++) {
    const { items } = await (await document.getPage(number)).getTextContent();
    pages.push(items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\\n' : '') : '')).join(''));
  }
  parentPort.postMessage({ pages });
}).catch((error) => parentPort.postMessage({ error: String(error && error.message || error) }));
`;

/**
 * The text layer of a PDF, page by page. pdf.js runs in a worker of its own, with a memory cap
 * and a time limit: a hostile or broken PDF can stall or bloat it, but never the bot's own thread.
 */
export function pdfText(bytes: Uint8Array, timeoutMs = 30_000): Promise<string[]> {
  return new Promise((resolve, reject) => {
    // pdf.js takes a plain Uint8Array (not a Buffer); the copy is handed over to the worker.
    const data = new Uint8Array(bytes);
    const worker = new Worker(EXTRACT, {
      eval: true,
      workerData: { pdfjs: PDFJS, bytes: data },
      transferList: [data.buffer],
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    const done = (settle: () => void) => {
      clearTimeout(timer);
      void worker.terminate();
      settle();
    };
    const timer = setTimeout(
      () => done(() => reject(new Error(`it took over ${timeoutMs / 1000} s`))),
      timeoutMs,
    );
    worker.once('message', (result: { pages?: string[]; error?: string }) =>
      done(() => (result.pages ? resolve(result.pages) : reject(new Error(result.error)))),
    );
    worker.once('error', (error) => done(() => reject(error)));
  });
}

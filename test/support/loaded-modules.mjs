// Preloaded by a test (`node --import`): every module the process loads is named in the file
// LOADED_MODULES_FILE names, one URL a line. A file, not stderr: a thousand lines written at once
// fill the pipe of a busy test worker, and a write to it then fails (EAGAIN), killing the process.
import { appendFileSync } from 'node:fs';
import module from 'node:module';

const file = process.env.LOADED_MODULES_FILE;
if (!file) throw new Error('LOADED_MODULES_FILE names no file');

module.registerHooks({
  load(url, context, next) {
    appendFileSync(file, `${url}\n`);
    return next(url, context);
  },
});

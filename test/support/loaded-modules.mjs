// Preloaded by a test (`node --import`): every module the process loads is named on stderr, one
// `loaded URL` line each.
import { writeSync } from 'node:fs';
import module from 'node:module';

module.registerHooks({
  load(url, context, next) {
    writeSync(2, `loaded ${url}\n`);
    return next(url, context);
  },
});

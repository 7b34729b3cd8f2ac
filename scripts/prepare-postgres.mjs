// `npm ci`'s postinstall, after the build: an initialized embedded PostgreSQL cluster in
// node_modules/.cache/spool, which a first start copies instead of running initdb. Where it cannot
// be made (no embedded PostgreSQL for this platform, a file system that refuses), a first start
// runs initdb as before: the install does not fail for it.
import { prepareTemplate } from '../dist/store/embedded-postgres.js';

try {
  const template = await prepareTemplate();
  if (template)
    console.log(`Embedded PostgreSQL: a cluster for first starts is ready (${template})`);
} catch (error) {
  console.warn(`Embedded PostgreSQL: no cluster prepared for first starts (${error.message})`);
}

import module from 'node:module';

// The entry `npm start` runs. Most of a start is Node compiling Spool's modules and their
// dependencies: kept on disk (the OS's temporary directory, or NODE_COMPILE_CACHE), the next start
// reads them compiled. Set here, before the first of them is loaded.
module.enableCompileCache?.();
// A stack trace names the line of Spool's TypeScript (dist/ keeps its source maps). Node reads and
// parses each module's map as it loads it: its packages' maps, which name only their own sources,
// took 30-70 ms of a start. Node before 22.14 has only the switch for every module.
if (module.setSourceMapsSupport) module.setSourceMapsSupport(true, { nodeModules: false });
else process.setSourceMapsEnabled(true);
// Loading the modules keeps this thread busy for most of a start: the embedded database's server is
// started first, in processes of its own, and starts meanwhile (store/embedded-start.ts).
await import('dotenv/config');
const { embeddedDataDir } = await import('./startup-settings.ts');
const dataDir = embeddedDataDir();
if (dataDir !== undefined)
  await (await import('./store/embedded-start.ts')).beginEmbeddedStart(dataDir);
await import('./main.ts');

import module from 'node:module';

// The entry `npm start` runs. Most of a start is Node compiling Spool's modules and their
// dependencies: kept on disk (the OS's temporary directory, or NODE_COMPILE_CACHE), the next start
// reads them compiled. Set here, before the first of them is loaded.
module.enableCompileCache?.();
await import('./main.ts');

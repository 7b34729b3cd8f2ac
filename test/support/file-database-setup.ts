import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createFileDatabase, dropFileDatabase } from './file-database.ts';
import { outputOfStarted } from './process.ts';

// Before every hook and test of the file: see file-database.ts.
beforeAll(createFileDatabase);
afterAll(dropFileDatabase);

// A failed test prints what the Spool processes of its file said last (what CI keeps of a flake).
beforeEach(({ onTestFailed }) => onTestFailed(() => console.log(outputOfStarted())));

import { afterAll, beforeAll } from 'vitest';
import { createFileDatabase, dropFileDatabase } from './file-database.ts';

// Before every hook and test of the file: see file-database.ts.
beforeAll(createFileDatabase);
afterAll(dropFileDatabase);

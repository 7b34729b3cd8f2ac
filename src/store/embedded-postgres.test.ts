import { describe, expect, it } from 'vitest';
import { syncMethod, userEntry } from './embedded-postgres.ts';

describe('userEntry', () => {
  const passwd = [
    'root:x:0:0:root:/root:/bin/bash',
    'postgresql:x:120:130::/var/lib/postgresql:/bin/false',
    'postgres:x:101:104:PostgreSQL administrator,,,:/var/lib/postgresql:/bin/bash',
    '',
  ].join('\n');

  it("finds the user's ids by its exact name", () => {
    expect(userEntry(passwd, 'postgres')).toEqual({ uid: 101, gid: 104 });
    expect(userEntry(passwd, 'root')).toEqual({ uid: 0, gid: 0 });
  });

  it('finds none for a missing user, an empty file, or a line whose ids are not numbers', () => {
    expect(userEntry(passwd, 'postgre')).toBeUndefined();
    expect(userEntry('', 'postgres')).toBeUndefined();
    expect(userEntry('postgres:x::104:::', 'postgres')).toBeUndefined();
    expect(userEntry('postgres:x:101', 'postgres')).toBeUndefined();
    expect(userEntry('+postgres:x:1a:2:::', 'postgres')).toBeUndefined();
  });
});

describe('syncMethod', () => {
  it('syncs the file system on Linux from 5.8, whose syncfs reports write errors', () => {
    expect(syncMethod('linux', '6.18.44-fc-v782')).toEqual(['--sync-method=syncfs']);
    expect(syncMethod('linux', '5.8.0')).toEqual(['--sync-method=syncfs']);
    expect(syncMethod('linux', '5.15.0-91-generic')).toEqual(['--sync-method=syncfs']);
  });

  it("keeps initdb's fsync of each file on older kernels and elsewhere", () => {
    expect(syncMethod('linux', '5.4.0-150-generic')).toEqual([]);
    expect(syncMethod('linux', '4.19.0')).toEqual([]);
    expect(syncMethod('linux', '')).toEqual([]);
    expect(syncMethod('darwin', '23.4.0')).toEqual([]);
  });
});

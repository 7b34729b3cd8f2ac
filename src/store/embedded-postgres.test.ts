import { describe, expect, it } from 'vitest';
import { userEntry } from './embedded-postgres.ts';

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

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wasm from '@prisma/prisma-schema-wasm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import { applyMigrations, MIGRATIONS_DIR, readMigrations } from '../../src/store/migrate.ts';
import { scratchDatabase, testDatabase } from '../support/db.ts';

interface DmmfField {
  name: string;
  dbName?: string;
  kind: string;
  type: string;
  isRequired: boolean;
  isList: boolean;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
}
interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: 'id' | 'unique' | 'normal' | 'fulltext';
  algorithm?: string;
  fields: Array<{ name: string; sortOrder?: 'asc' | 'desc' }>;
}

const dmmf = JSON.parse(
  wasm.get_dmmf(
    JSON.stringify({
      prismaSchema: readFileSync(new URL('../../prisma/schema.prisma', import.meta.url), 'utf8'),
    }),
  ),
) as { datamodel: { models: DmmfModel[]; indexes: DmmfIndex[] } };
const models = dmmf.datamodel.models;
const tableOf = (model: string) => {
  const m = models.find((x) => x.name === model)!;
  return m.dbName ?? m.name;
};
const columnOf = (model: string, field: string) => {
  const f = models.find((x) => x.name === model)!.fields.find((x) => x.name === field);
  return f?.dbName ?? field; // Unsupported fields (search) are absent from the DMMF: same name
};

const PG_TYPE: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Boolean: 'boolean',
  DateTime: 'timestamp with time zone',
  Json: 'jsonb',
  Bytes: 'bytea',
  Decimal: 'numeric',
};

let db: Database;
beforeAll(async () => {
  db = await testDatabase();
});
afterAll(() => db.close());

describe('schema.prisma and the migration SQL', () => {
  it('define the same tables and columns, with the same types and nullability', async () => {
    const { rows } = await db.pool.query<{
      table_name: string;
      column_name: string;
      data_type: string;
      udt_name: string;
      is_nullable: string;
    }>(
      `SELECT table_name, column_name, data_type, udt_name, is_nullable FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
    );
    const actual = rows
      .map(
        (r) =>
          `${r.table_name}.${r.column_name} ${r.data_type === 'USER-DEFINED' ? r.udt_name : r.data_type}${r.is_nullable === 'YES' ? '?' : ''}`,
      )
      .sort();
    const expected = models
      .flatMap((m) => {
        const scalars = m.fields
          .filter((f) => f.kind === 'scalar')
          .map((f) => {
            const type = f.nativeType?.[0] === 'Uuid' ? 'uuid' : PG_TYPE[f.type];
            return `${tableOf(m.name)}.${f.dbName ?? f.name} ${type}${f.isRequired ? '' : '?'}`;
          });
        const known = new Set(m.fields.map((f) => f.name));
        const unsupported = dmmf.datamodel.indexes
          .filter((i) => i.model === m.name)
          .flatMap((i) => i.fields.map((f) => f.name))
          .filter((name, i, all) => !known.has(name) && all.indexOf(name) === i)
          .map((name) => `${tableOf(m.name)}.${name} tsvector?`);
        return [...scalars, ...unsupported];
      })
      .sort();
    expect(actual).toEqual(expected);
  });

  it('define the same indexes', async () => {
    const { rows } = await db.pool.query<{ def: string }>(
      `SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relname <> '_prisma_migrations'`,
    );
    const actual = rows
      .map((r) => {
        const [, unique, table, method, columns] =
          /^CREATE (UNIQUE )?INDEX \S+ ON (?:public\.)?(\S+) USING (\w+) \((.*)\)$/.exec(r.def)!;
        // PostgreSQL quotes a column named like a keyword ("position"); the DMMF does not.
        return `${table} ${unique ? 'unique ' : ''}${method} (${columns!.replace(/"/g, '')})`;
      })
      .sort();
    const expected = dmmf.datamodel.indexes
      .map((i) => {
        const columns = i.fields
          .map((f) => `${columnOf(i.model, f.name)}${f.sortOrder === 'desc' ? ' DESC' : ''}`)
          .join(', ');
        const unique = i.type === 'id' || i.type === 'unique' ? 'unique ' : '';
        return `${tableOf(i.model)} ${unique}${(i.algorithm ?? 'BTree').toLowerCase()} (${columns})`;
      })
      .sort();
    expect(actual).toEqual(expected);
  });

  it('define the same foreign keys and delete rules', async () => {
    const { rows } = await db.pool.query<{ def: string; table: string }>(
      `SELECT conrelid::regclass::text AS table, pg_get_constraintdef(oid) AS def FROM pg_constraint
        WHERE contype = 'f' AND connamespace = 'public'::regnamespace`,
    );
    const actual = rows
      .map((r) => `${r.table.replace(/"/g, '')} ${r.def.replace(/ ON UPDATE CASCADE/, '')}`)
      .sort();
    const expected = models
      .flatMap((m) =>
        m.fields
          .filter((f) => f.relationFromFields?.length)
          .map(
            (f) =>
              `${tableOf(m.name)} FOREIGN KEY (${f.relationFromFields!.map((x) => columnOf(m.name, x)).join(', ')}) REFERENCES ${tableOf(f.type)}(${f.relationToFields!.map((x) => columnOf(f.type, x)).join(', ')}) ON DELETE ${f.relationOnDelete!.replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase()}`,
          ),
      )
      .sort();
    expect(actual).toEqual(expected);
  });

  it('round-trip every model through the generated client', async () => {
    const conversation = await db.prisma.conversation.create({
      data: { platform: 'schema', workspace: crypto.randomUUID(), channel: 'c', thread: 't' },
    });
    const message = await db.prisma.transcriptMessage.create({
      data: {
        conversationId: conversation.id,
        channelKey: 'k',
        turn: 1,
        role: 'assistant',
        content: 'x',
        toolCalls: [{ id: 'a', name: 'n', arguments: '{}' }],
      },
    });
    const call = await db.prisma.toolCall.create({
      data: {
        conversationId: conversation.id,
        channelKey: 'k',
        messageId: message.id,
        toolCallId: 'a',
        toolName: 'n',
        arguments: '{}',
        turn: 1,
      },
    });
    const result = await db.prisma.toolResult.create({
      data: {
        callId: call.id,
        channelKey: 'k',
        toolName: 'n',
        content: 'r',
        contentChars: 1,
        isError: true,
        durationMs: 3,
      },
    });
    const usage = await db.prisma.llmUsage.create({
      data: {
        conversationId: conversation.id,
        platform: 'schema',
        workspace: conversation.workspace,
        channel: 'c',
        userId: 'u',
        model: 'm',
        promptTokens: 1,
        cachedPromptTokens: 1,
        completionTokens: 2,
        reasoningTokens: 1,
        totalTokens: 3,
        cost: '0.0000125',
        responseId: 'chatcmpl-1',
      },
    });
    const loaded = await db.prisma.conversation.findUniqueOrThrow({
      where: { id: conversation.id },
      include: { messages: { include: { calls: { include: { result: true } } } }, usage: true },
    });
    expect(loaded).toMatchObject({
      ...conversation,
      usage: [usage],
      messages: [{ ...message, calls: [{ ...call, result }] }],
    });
  });
});

describe('applyMigrations', () => {
  it('records each migration the way Prisma Migrate does', async () => {
    const migrations = await readMigrations(MIGRATIONS_DIR);
    const { rows } = await db.pool.query(
      'SELECT migration_name, checksum, finished_at, applied_steps_count, rolled_back_at FROM _prisma_migrations ORDER BY migration_name',
    );
    expect(rows.map((r) => r.migration_name)).toEqual(migrations.map((m) => m.name));
    for (const [i, row] of rows.entries()) {
      const sql = readFileSync(`${MIGRATIONS_DIR}/${migrations[i]!.name}/migration.sql`, 'utf8');
      expect(row).toMatchObject({
        checksum: createHash('sha256').update(sql).digest('hex'),
        applied_steps_count: 1,
        rolled_back_at: null,
      });
      expect(row.finished_at).toBeInstanceOf(Date);
    }
  });

  it('is idempotent on a fresh database', async () => {
    const scratch = await scratchDatabase('spool_migrate');
    const client = new pg.Client({ connectionString: scratch.url });
    await client.connect();
    try {
      const names = (await readMigrations(MIGRATIONS_DIR)).map((m) => m.name);
      expect(await applyMigrations(client, MIGRATIONS_DIR)).toEqual({
        applied: names,
        modified: [],
      });
      expect(await applyMigrations(client, MIGRATIONS_DIR)).toEqual({ applied: [], modified: [] });
    } finally {
      await client.end();
      await scratch.drop();
    }
  });

  it("keeps the usage rows of before the usage migration, each given its conversation's place", async () => {
    const scratch = await scratchDatabase('spool_migrate');
    const before = await mkdtemp(join(tmpdir(), 'spool-migrations-'));
    const client = new pg.Client({ connectionString: scratch.url });
    await client.connect();
    try {
      for (const { name } of await readMigrations(MIGRATIONS_DIR))
        if (name < '20261125000000_usage')
          await cp(join(MIGRATIONS_DIR, name), join(before, name), { recursive: true });
      await applyMigrations(client, before);
      await client.query(
        `WITH c AS (INSERT INTO conversations (id, platform, workspace, channel, thread)
                    VALUES (gen_random_uuid(), 'slack', 'T1', 'C1', '1.0') RETURNING id)
         INSERT INTO llm_usage (conversation_id, model, prompt_tokens, completion_tokens, total_tokens)
         SELECT id, 'gpt-4o', 100, 20, 120 FROM c`,
      );
      await applyMigrations(client, MIGRATIONS_DIR);
      const { rows } = await client.query(
        'SELECT platform, workspace, channel, user_id, prompt_tokens, cached_prompt_tokens, total_tokens, cost FROM llm_usage',
      );
      expect(rows).toEqual([
        {
          platform: 'slack',
          workspace: 'T1',
          channel: 'C1',
          user_id: null,
          prompt_tokens: 100,
          cached_prompt_tokens: 0,
          total_tokens: 120,
          cost: null,
        },
      ]);
    } finally {
      await client.end();
      await scratch.drop();
      await rm(before, { recursive: true, force: true });
    }
  });

  it('checks a database with nothing pending without waiting for the migration lock', async () => {
    const scratch = await scratchDatabase('spool_migrate');
    const [holder, starter] = [scratch.url, scratch.url].map(
      (connectionString) => new pg.Client({ connectionString }),
    );
    await Promise.all([holder!.connect(), starter!.connect()]);
    try {
      await applyMigrations(starter!, MIGRATIONS_DIR);
      // Prisma Migrate's lock, held as by a starter applying a migration: a start with nothing
      // pending reads the applied ones and goes on.
      await holder!.query('SELECT pg_advisory_lock(72707369)');
      expect(await applyMigrations(starter!, MIGRATIONS_DIR)).toEqual({
        applied: [],
        modified: [],
      });
    } finally {
      await Promise.all([holder!.end(), starter!.end()]);
      await scratch.drop();
    }
  });

  it('applies each migration once when several processes start at the same time', async () => {
    const scratch = await scratchDatabase('spool_migrate');
    const clients = await Promise.all(
      [1, 2, 3].map(async () => {
        const c = new pg.Client({ connectionString: scratch.url });
        await c.connect();
        return c;
      }),
    );
    try {
      const reports = await Promise.all(clients.map((c) => applyMigrations(c, MIGRATIONS_DIR)));
      const names = (await readMigrations(MIGRATIONS_DIR)).map((m) => m.name);
      expect(reports.flatMap((r) => r.applied).sort()).toEqual(names);
      const { rows } = await clients[0]!.query('SELECT count(*)::int AS n FROM _prisma_migrations');
      expect(rows[0].n).toBe(names.length);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
      await scratch.drop();
    }
  });
});

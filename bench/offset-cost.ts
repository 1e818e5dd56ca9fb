/**
 * What a deep page costs with `OFFSET`, and with a keyset cursor instead, on
 * both of the example's databases: a `books` table of `--rows` rows (the
 * example's schema), page of 20 by id, timed in-process (SQLite) or by
 * `EXPLAIN (ANALYZE)` on a throwaway PostgreSQL (server time, no round trip).
 *
 *   node --conditions=source bench/offset-cost.ts [--rows 1000000]
 *
 * Prints a Markdown table (the example's README quotes it).
 */
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { PostgresServer } from '../tools/postgres-server.ts';
import { median, sig } from './lib/stats.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' } } });
const ROWS = Number(values.rows);
const LIMIT = 20;
const DEPTHS = [0, 1_000, 100_000, ROWS - LIMIT].filter((d) => d >= 0 && d < ROWS);
const REPEAT = 15;

const schema =
  'CREATE TABLE books (id INTEGER PRIMARY KEY, isbn TEXT NOT NULL UNIQUE, title TEXT NOT NULL, author TEXT NOT NULL, year INTEGER NOT NULL, pages INTEGER NOT NULL)';
const offsetSql = (p: string) => `SELECT id, isbn, title, author, year, pages FROM books ORDER BY id LIMIT ${LIMIT} OFFSET ${p}`;
const keysetSql = (p: string) => `SELECT id, isbn, title, author, year, pages FROM books WHERE id > ${p} ORDER BY id LIMIT ${LIMIT}`;

function sqlite(): Map<string, number> {
  const db = new DatabaseSync(':memory:');
  db.exec(schema);
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
    INSERT INTO books SELECT i, '978' || printf('%010d', i), 'The Title ' || i, 'Author ' || (i % 97), 1900 + i % 125, 80 + i % 900 FROM n`);
  const offset = db.prepare(offsetSql('?1'));
  const keyset = db.prepare(keysetSql('?1'));
  const out = new Map<string, number>();
  for (const depth of DEPTHS) {
    const time = (run: () => unknown) => {
      const samples: number[] = [];
      for (let i = 0; i < REPEAT; i++) {
        const t = performance.now();
        run();
        samples.push(performance.now() - t);
      }
      return median(samples);
    };
    out.set(
      `offset:${depth}`,
      time(() => offset.all(depth)),
    );
    out.set(
      `keyset:${depth}`,
      time(() => keyset.all(depth)),
    ); // ids are 1…ROWS: the page after id `depth`
  }
  db.close();
  return out;
}

async function postgres(): Promise<Map<string, number>> {
  const server = await PostgresServer.create();
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    await client.query(schema.replace('INTEGER PRIMARY KEY', 'integer PRIMARY KEY'));
    await client.query(
      `INSERT INTO books SELECT i, '978' || lpad(i::text, 10, '0'), 'The Title ' || i, 'Author ' || (i % 97), 1900 + i % 125, 80 + i % 900 FROM generate_series(1, ${ROWS}) AS i`,
    );
    await client.query('VACUUM ANALYZE books');
    const out = new Map<string, number>();
    for (const depth of DEPTHS) {
      for (const [name, sql] of [
        ['offset', offsetSql(String(depth))],
        ['keyset', keysetSql(String(depth))],
      ] as const) {
        const samples: number[] = [];
        for (let i = 0; i < REPEAT; i++) {
          const { rows } = await client.query<{ 'QUERY PLAN': { 'Execution Time': number }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`);
          samples.push(rows[0]?.['QUERY PLAN'][0]?.['Execution Time'] ?? Number.NaN);
        }
        out.set(`${name}:${depth}`, median(samples));
      }
    }
    return out;
  } finally {
    await client.end();
    await server.dispose();
  }
}

const lite = sqlite();
const post = await postgres();
const lines = [
  `Page of ${LIMIT} by id over ${ROWS.toLocaleString('en')} rows, median of ${REPEAT}, ms (\`bench/offset-cost.ts\`, Node ${process.version}):`,
  '',
  '| rows skipped | SQLite `OFFSET` | SQLite keyset | PostgreSQL `OFFSET` | PostgreSQL keyset |',
  '|---|---|---|---|---|',
  ...DEPTHS.map(
    (d) =>
      `| ${d.toLocaleString('en')} | ${sig(lite.get(`offset:${d}`) ?? 0)} | ${sig(lite.get(`keyset:${d}`) ?? 0)} | ${sig(post.get(`offset:${d}`) ?? 0)} | ${sig(post.get(`keyset:${d}`) ?? 0)} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);

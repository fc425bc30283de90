// node-postgres (pg) as an application uses it: a Client and a Pool,
// $n parameters, named prepared statements, transactions, type parsing.
// Prints "STEP <name> ok" or "STEP <name> FAIL <error>" per step and exits
// 1 when one failed. Usage: node pg_client.js postgres://user@host:port/db
'use strict';
const { Client, Pool } = require('pg');

const url = process.argv[2];
if (!url) {
  console.error('usage: node pg_client.js postgres://user@host:port/db');
  process.exit(2);
}
const T = `node_pg_items_${process.pid}`;
let failed = false;

async function step(name, fn) {
  try {
    await fn();
    console.log(`STEP ${name} ok`);
    return true;
  } catch (e) {
    failed = true;
    console.log(`STEP ${name} FAIL ${String(e && e.message || e).split(/\s+/).join(' ')}`);
    return false;
  }
}

function check(what, got, want) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}

async function main() {
  const client = new Client({ connectionString: url });
  if (!await step('connect', () => client.connect())) return;
  let id;
  await step('create_table', () => client.query(
    `CREATE TABLE ${T} (id serial PRIMARY KEY, name text NOT NULL, qty integer, big bigint, ok boolean, price numeric)`));
  await step('insert_returning', async () => {
    const r = await client.query(`INSERT INTO ${T} (name, qty, big, ok, price) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      ['apple', 3, '9007199254740993', true, '1.50']);
    id = r.rows[0].id;
    check('rowCount', r.rowCount, 1);
  });
  await step('select_params', async () => {
    const r = await client.query(`SELECT name, qty, big, ok, price FROM ${T} WHERE id = $1`, [id]);
    check('row', r.rows[0], { name: 'apple', qty: 3, big: '9007199254740993', ok: true, price: '1.50' });
  });
  await step('named_prepared', async () => {
    for (const [n, q] of [['pear', 10], ['plum', 11], ['fig', null]]) {
      await client.query({ name: 'ins-item', text: `INSERT INTO ${T} (name, qty) VALUES ($1, $2)`, values: [n, q] });
    }
  });
  await step('select_rows', async () => {
    const r = await client.query(`SELECT name, qty FROM ${T} WHERE qty >= $1 ORDER BY name`, [10]);
    check('rows', r.rows, [{ name: 'pear', qty: 10 }, { name: 'plum', qty: 11 }]);
    check('fields', r.fields.map(f => f.name), ['name', 'qty']);
  });
  await step('row_mode_array', async () => {
    const r = await client.query({ text: `SELECT name, qty FROM ${T} WHERE name = $1`, values: ['fig'], rowMode: 'array' });
    check('rows', r.rows, [['fig', null]]);
  });
  await step('transaction_commit', async () => {
    await client.query('BEGIN');
    try {
      await client.query(`UPDATE ${T} SET qty = qty + 1 WHERE id = $1`, [id]);
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK');
      throw e;
    }
    const r = await client.query(`SELECT qty FROM ${T} WHERE id = $1`, [id]);
    check('qty', r.rows[0].qty, 4);
  });
  await step('transaction_rollback', async () => {
    await client.query('BEGIN');
    await client.query(`DELETE FROM ${T}`);
    await client.query('ROLLBACK');
    const r = await client.query(`SELECT count(*)::int AS n FROM ${T}`);
    check('count', r.rows[0].n, 4);
  });
  await step('unique_violation', async () => {
    try {
      await client.query(`INSERT INTO ${T} (id, name) VALUES ($1, $2)`, [id, 'dup']);
    } catch (e) {
      check('code', e.code, '23505');
      return;
    }
    throw new Error('no unique violation');
  });
  await step('pool', async () => {
    const pool = new Pool({ connectionString: url, max: 3 });
    try {
      const rs = await Promise.all([1, 2, 3].map(i => pool.query(`SELECT name FROM ${T} WHERE qty = $1`, [i + 9])));
      check('names', rs.map(r => r.rows.length ? r.rows[0].name : null), ['pear', 'plum', null]);
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        await c.query(`SELECT * FROM ${T} WHERE id = $1 FOR UPDATE`, [id]);
        await c.query('COMMIT');
      } finally {
        c.release();
      }
    } finally {
      await pool.end();
    }
  });
  await step('drop_table', () => client.query(`DROP TABLE ${T}`));
  await client.end();
}

main().catch(e => { failed = true; console.error(e); }).finally(() => process.exit(failed ? 1 : 0));

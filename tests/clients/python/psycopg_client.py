"""psycopg 3 (Debian's python3-psycopg) with its default settings: server-side
parameter binding, %b binary parameters and binary results, pipeline mode,
named (server-side) cursors, nested transaction() blocks."""
import decimal

import psycopg

from steps import run, check, table, url, finish

T = table("py_pg3_items")
conn = None


def connect():
    global conn
    conn = psycopg.connect(url())


def create_table():
    with conn.transaction():
        conn.execute(f"CREATE TABLE {T} (id bigserial PRIMARY KEY, name text NOT NULL, qty integer, price numeric, ok boolean)")


ids = []


def insert_returning():
    with conn.transaction():
        cur = conn.execute(f"INSERT INTO {T} (name, qty, price, ok) VALUES (%s, %s, %s, %s) RETURNING id",
                           ("apple", 3, decimal.Decimal("1.50"), True))
        ids.append(cur.fetchone()[0])


def executemany():
    with conn.transaction():
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {T} (name, qty) VALUES (%s, %s)",
                            [("pear", 10), ("plum", 11), ("fig", None)])


def select_rows():
    with conn.transaction():
        rows = conn.execute(f"SELECT name, qty FROM {T} WHERE qty >= %s ORDER BY name", (10,)).fetchall()
        check("rows", rows, [("pear", 10), ("plum", 11)])


def binary_params():
    with conn.transaction():
        row = conn.execute(f"SELECT name, qty, price, ok FROM {T} WHERE id = %b AND name = %b",
                           (ids[0], "apple")).fetchone()
        check("row", row, ("apple", 3, decimal.Decimal("1.50"), True))


def binary_results():
    with conn.transaction():
        with conn.cursor(binary=True) as cur:
            cur.execute(f"SELECT id, name, qty, price, ok FROM {T} WHERE id = %s", (ids[0],))
            check("row", cur.fetchone(), (ids[0], "apple", 3, decimal.Decimal("1.50"), True))


def null_value():
    with conn.transaction():
        check("row", conn.execute(f"SELECT qty, price FROM {T} WHERE name = %s", ("fig",)).fetchone(), (None, None))


def pipeline():
    with conn.pipeline():
        with conn.transaction():
            conn.execute(f"INSERT INTO {T} (name, qty) VALUES (%s, %s)", ("kiwi", 20))
            conn.execute(f"UPDATE {T} SET qty = qty + %s WHERE name = %s", (1, "kiwi"))
            cur = conn.execute(f"SELECT qty FROM {T} WHERE name = %s", ("kiwi",))
        check("qty", cur.fetchone()[0], 21)


def server_side_cursor():
    with conn.transaction():
        with conn.cursor(name="items_cur") as cur:
            cur.itersize = 2
            cur.execute(f"SELECT name FROM {T} ORDER BY name")
            check("first two", cur.fetchmany(2), [("apple",), ("fig",)])
            check("rest", [r[0] for r in cur], ["kiwi", "pear", "plum"])


def transaction_nesting():
    with conn.transaction():
        conn.execute(f"UPDATE {T} SET qty = 100 WHERE name = %s", ("pear",))
        try:
            with conn.transaction():  # a savepoint
                conn.execute(f"UPDATE {T} SET qty = 200 WHERE name = %s", ("pear",))
                raise RuntimeError("roll back to the savepoint")
        except RuntimeError:
            pass
        with conn.transaction():
            conn.execute(f"UPDATE {T} SET qty = qty + 1 WHERE name = %s", ("plum",))
    with conn.transaction():
        rows = conn.execute(f"SELECT name, qty FROM {T} WHERE name IN (%s, %s) ORDER BY name", ("pear", "plum")).fetchall()
        check("rows", rows, [("pear", 100), ("plum", 12)])


def rollback():
    try:
        with conn.transaction():
            conn.execute(f"DELETE FROM {T}")
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    with conn.transaction():
        check("count", conn.execute(f"SELECT count(*) FROM {T}").fetchone()[0], 5)


def unique_violation():
    try:
        with conn.transaction():
            conn.execute(f"INSERT INTO {T} (id, name) VALUES (%s, %s)", (ids[0], "dup"))
    except psycopg.errors.UniqueViolation:
        pass
    else:
        raise AssertionError("no unique violation")
    with conn.transaction():
        check("select 1", conn.execute("SELECT 1").fetchone(), (1,))


def drop_table():
    with conn.transaction():
        conn.execute(f"DROP TABLE {T}")


if run("connect", connect):
    # Default settings (autocommit off): each step is a transaction() block.
    for name, fn in [("create_table", create_table), ("insert_returning", insert_returning),
                     ("executemany", executemany), ("select_rows", select_rows),
                     ("binary_params", binary_params), ("binary_results", binary_results),
                     ("null_value", null_value), ("pipeline", pipeline),
                     ("server_side_cursor", server_side_cursor),
                     ("transaction_nesting", transaction_nesting), ("rollback", rollback),
                     ("unique_violation", unique_violation), ("drop_table", drop_table)]:
        if not run(name, fn) and conn.closed:
            break
finish()

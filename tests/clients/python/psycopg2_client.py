"""psycopg2 (Debian's python3-psycopg2) as an application uses it."""
import decimal

import psycopg2
import psycopg2.extras

from steps import run, check, table, url, finish

T = table("py_pg2_items")
conn = None


def connect():
    global conn
    conn = psycopg2.connect(url())


def create_table():
    with conn, conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {T} (id serial PRIMARY KEY, name text NOT NULL, qty integer, price numeric)")


ids = []


def insert_returning():
    with conn, conn.cursor() as cur:
        cur.execute(f"INSERT INTO {T} (name, qty, price) VALUES (%s, %s, %s) RETURNING id",
                    ("apple", 3, decimal.Decimal("1.50")))
        ids.append(cur.fetchone()[0])


def executemany():
    with conn, conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {T} (name, qty) VALUES (%s, %s)",
                        [("pear", 10), ("plum", 11), ("fig", None)])
        check("rowcount", cur.rowcount, 3)


def execute_values():
    with conn, conn.cursor() as cur:
        psycopg2.extras.execute_values(cur, f"INSERT INTO {T} (name, qty) VALUES %s",
                                       [("kiwi", 20), ("lime", 21)])


def select_fetchall():
    with conn, conn.cursor() as cur:
        cur.execute(f"SELECT name, qty FROM {T} WHERE qty >= %s ORDER BY name", (10,))
        check("rows", cur.fetchall(), [("kiwi", 20), ("lime", 21), ("pear", 10), ("plum", 11)])


def select_fetchone():
    with conn, conn.cursor() as cur:
        cur.execute(f"SELECT name, qty, price FROM {T} WHERE id = %s", (ids[0],))
        check("row", cur.fetchone(), ("apple", 3, decimal.Decimal("1.50")))


def null_value():
    with conn, conn.cursor() as cur:
        cur.execute(f"SELECT qty, price FROM {T} WHERE name = %(n)s", {"n": "fig"})
        check("row", cur.fetchone(), (None, None))


def dict_cursor():
    with conn, conn.cursor(cursor_factory=psycopg2.extras.RealDictCursor) as cur:
        cur.execute(f"SELECT name, qty FROM {T} WHERE name = %s", ("pear",))
        check("row", dict(cur.fetchone()), {"name": "pear", "qty": 10})


def rollback():
    with conn.cursor() as cur:
        cur.execute(f"DELETE FROM {T}")
    conn.rollback()
    with conn, conn.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {T}")
        check("count", cur.fetchone()[0], 6)


def error_then_recover():
    with conn.cursor() as cur:
        try:
            cur.execute(f"INSERT INTO {T} (id, name) VALUES (%s, %s)", (ids[0], "dup"))
        except psycopg2.errors.UniqueViolation:
            conn.rollback()
        else:
            raise AssertionError("no unique violation")
        cur.execute("SELECT 1")
        check("select 1", cur.fetchone(), (1,))
    conn.commit()


def select_for_update():
    with conn, conn.cursor() as cur:
        cur.execute(f"SELECT qty FROM {T} WHERE id = %s FOR UPDATE", (ids[0],))
        cur.execute(f"UPDATE {T} SET qty = %s WHERE id = %s", (cur.fetchone()[0] + 1, ids[0]))


def autocommit():
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f"UPDATE {T} SET qty = qty + 1 WHERE id = %s", (ids[0],))
        cur.execute(f"SELECT qty FROM {T} WHERE id = %s", (ids[0],))
        check("qty", cur.fetchone()[0], 5)
    conn.autocommit = False


def drop_table():
    with conn, conn.cursor() as cur:
        cur.execute(f"DROP TABLE {T}")


if run("connect", connect):
    for name, fn in [("create_table", create_table), ("insert_returning", insert_returning),
                     ("executemany", executemany), ("execute_values", execute_values),
                     ("select_fetchall", select_fetchall), ("select_fetchone", select_fetchone),
                     ("null_value", null_value), ("dict_cursor", dict_cursor),
                     ("rollback", rollback), ("error_then_recover", error_then_recover),
                     ("select_for_update", select_for_update), ("autocommit", autocommit),
                     ("drop_table", drop_table)]:
        if not run(name, fn) and not conn.closed:
            conn.rollback()
finish()

package sqlfe

import "testing"

// Array columns — text[], varchar[], numeric[], timestamptz[], uuid[] held
// as their canonical text, integer[] and bigint[] stored as theirs — survive
// closing and reopening a pebble-backed database, with NULL elements and
// the elements array_out quotes; a column added by ALTER TABLE too.
func TestArraysReopen(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TABLE a (id int PRIMARY KEY, tags text[], v varchar[], n numeric[], ts timestamptz[], i int[], b bigint[])", "CREATE TABLE")
	mustRun(t, s, `INSERT INTO a VALUES (1, ARRAY['x y', NULL, '', 'NULL', 'q"\'], '{w}', '{1.50,NULL}', '{2024-01-02 03:04:05+00}', '{1,2}', '{9223372036854775807}'), (2, '{}', NULL, NULL, NULL, '{}', NULL)`, "INSERT 0 2")
	mustRun(t, s, "ALTER TABLE a ADD COLUMN u uuid[]", "ALTER TABLE")
	mustRun(t, s, "UPDATE a SET u = ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid] WHERE id = 2", "UPDATE 1")
	s.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, s = newDiskSession(t, dir)
	defer db.Close()
	defer s.Close()
	mustRun(t, s, "SELECT * FROM a ORDER BY id",
		`1|{"x y",NULL,"","NULL","q\"\\"}|{w}|{1.50,NULL}|{"2024-01-02 03:04:05+00"}|{1,2}|{9223372036854775807}|NULL`+"\n"+
			"2|{}|NULL|NULL|NULL|{}|NULL|{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}\nSELECT 2")
	mustRun(t, s, "SELECT id, tags[1], i[2] + 1, cardinality(tags) FROM a WHERE '' = ANY(tags) OR i = '{}' ORDER BY id", "1|x y|3|5\n2|NULL|NULL|0\nSELECT 2")
	mustRun(t, s, "SELECT array_agg(x ORDER BY x) FROM unnest((SELECT v || tags FROM a WHERE id = 1)) x WHERE x <> ''", `{"NULL","q\"\\",w,"x y"}`+"\nSELECT 1")
}

// An array is no primary key or index key here (its text does not sort as
// arrays do): 0A000, not a wrong order; bad array input is 22P02.
func TestArrayKeysRefused(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE k (id int PRIMARY KEY, tags text[])", "CREATE TABLE")
	mustFail(t, s, "CREATE TABLE k2 (tags text[] PRIMARY KEY)", "0A000", "")
	mustFail(t, s, "CREATE INDEX ON k (tags)", "0A000", "")
	mustFail(t, s, "ALTER TABLE k ADD UNIQUE (tags)", "0A000", "")
	mustFail(t, s, "CREATE TABLE k3 (id int PRIMARY KEY, tags text[] UNIQUE)", "0A000", "")
	mustFail(t, s, "INSERT INTO k VALUES (1, '{a')", "22P02", `malformed array literal: "{a"`)
	mustFail(t, s, "INSERT INTO k VALUES (1, '{{a},{b}}')", "0A000", "")
}

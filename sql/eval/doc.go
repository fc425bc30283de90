// Package eval is the SQL layer's built-in functions and operators that
// need no session: what a function or operator computes from its
// argument values once sqlfe has resolved which one a call names and
// cast its arguments. It holds the string, math, date and time,
// formatting (to_char, to_timestamp, to_date), json, array and bytea
// functions, the arithmetic and comparison operators' value work, LIKE
// and the regular-expression matches, the rows of the set-returning
// functions, and a registry of the fixed-signature functions (Builtins).
//
// Who calls it: sqlfe's expression compiler and executor. sqlfe resolves
// a call or an operator (funcs.go's funcCall, polyFuncs in strfuncs.go,
// textfuncs.go, datefuncs.go, arrayfuncs.go, jsonfuncs.go,
// byteafuncs.go; compile.go's operators), builds the expression node,
// and the node calls the function here on the values it evaluated. It
// imports sql/types and sql/pgerror only: never sqlfe, sql/catalog, the
// engine or pg_query, so a function here sees values, never a parse
// tree, a session or a transaction.
//
// Invariants:
//   - Pure: the same arguments (and Context) give the same result; no
//     I/O, no clock, no randomness, no global state but the read-only
//     tables and Builtins built at init (a Pattern keeps the last
//     pattern it compiled, which changes no result). Context.TxStart is
//     the one thing a function reads beyond its arguments: age(x) at the
//     transaction's date. Functions that read the clock or randomness
//     (now, clock_timestamp, random, gen_random_uuid) or the session
//     (current_setting, nextval, txid_current, pg_sleep's cancellation)
//     are sqlfe's.
//   - Errors are *pgerror.Error with PostgreSQL 15's SQLSTATE and
//     wording: 22007 a malformed date or time field, 22008 one out of
//     range, 22003 a number out of range, 22012 division by zero, 22023
//     a bad argument, 2201B a bad regular expression, 0A000 a form not
//     supported; never a panic (formatting_test.go feeds to_char and
//     to_timestamp random formats and inputs).
//   - Argument types are the caller's promise: a function gets values of
//     the types its doc names, already cast. Unless its doc says "Not
//     strict", its arguments are non-NULL: sqlfe's strict wrapper answers
//     NULL for a NULL one before calling it.
//   - The session's settings: TimeZone is UTC, DateStyle ISO,
//     IntervalStyle postgres, fixed in tupled (see Context), so no
//     function takes them; a setting that comes to matter goes into
//     Context, which sqlfe's env implements.
//
// Adding a function: write its body here, in the file of its kind, as a
// function of values (func F(a []types.Value) (types.Value, error) for
// a strict one, or with its arguments named), with PostgreSQL's errors.
// If it has one signature, register it in Builtins from an init here;
// sqlfe's funcCall finds it by name, casts the arguments to Args, and
// nothing in sqlfe changes. If it is overloaded or polymorphic, add its
// resolution (which argument types, which result type) to sqlfe's
// polyFuncs beside its kind's (datefuncs.go, strfuncs.go, ...), calling
// the body here. A test of the body goes here; one through SQL goes to
// sqlfe or the corpus (tests/sqllogic).
//
// Files: doc.go; context.go (Context, Builtin, Builtins); text.go (the
// string functions: substr, trim, left, right, repeat, split_part,
// concat, lpad, rpad, format, the regexp functions, md5, quote_ident,
// quote_literal, length, lower, upper, pg_size_pretty, bytea ||, ...);
// math.go (abs, sign, round, trunc, ceil, floor, log, power, the float
// functions, and the arithmetic operators: Arith, Negate); formatting.go
// (to_char, to_timestamp, to_date as PostgreSQL's formatting.c, with
// formatting_interval.go for to_char of an interval); date.go (extract,
// date_part, date_trunc, make_date, make_timestamp,
// to_timestamp(double), age, date ± integer); interval.go (the operators
// of interval and time, justify_*); json.go (json's operators, to_json,
// json[b]_build_object, json[b]_typeof, jsonb_set, the element text of
// json[b]_agg and of a whole row); array.go (the array functions and
// ||, @>, <@, && on arrays); pattern.go (LIKE, ILIKE, SIMILAR TO and ~
// as Go regular expressions; substring(... FROM ...)); compare.go
// (CmpOp, row comparisons); srf.go (the rows of generate_series,
// regexp_matches, json[b]_array_elements[_text], json[b]_object_keys).
package eval

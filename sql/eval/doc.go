// Package eval is the SQL layer's built-in functions and operators that
// need no session: what a function or operator computes from its
// argument values, once sqlfe has resolved which one a call names and
// cast its arguments. It holds the formatting functions (to_char,
// to_timestamp, to_date), the date and time functions and the
// arithmetic of date, timestamp, time and interval, and a registry of
// the fixed-signature functions (Builtins).
//
// Who calls it: sqlfe's expression compiler (funcs.go, the type files'
// polymorphic functions and operators), whose compiled expressions call
// these functions as they run. It imports sql/types and sql/pgerror
// only: never sqlfe, sql/catalog, the engine or pg_query, so a function
// here sees values, never a parse tree, a session or a transaction.
//
// Invariants:
//   - Pure: the same arguments (and Context) give the same result; no
//     I/O, no clock but Context.TxStart, no global state but the
//     read-only tables built at init. (random() and gen_random_uuid
//     stay sqlfe's.)
//   - Errors are *pgerror.Error with PostgreSQL 15's SQLSTATE and
//     wording: 22007 a malformed date or time field, 22008 one out of
//     range, 22003 a number out of range, 22023 a bad argument, 0A000 a
//     form not supported; never a panic on any input
//     (formatting_test.go feeds random formats).
//   - Argument types are the caller's promise: a function whose doc
//     names its argument types gets values of those types, already
//     cast; unless its doc says otherwise its arguments are non-NULL
//     (sqlfe's strict wrapper answers NULL for a NULL one before).
//   - The session's settings a function could read are in Context,
//     which is small on purpose (see its doc): sqlfe's env provides it.
//
// Adding a function: write its body here, in the file of its kind, as
// a function of values (func F(a []types.Value) (types.Value, error) for
// the strict ones, or with the arguments named), with PostgreSQL's
// errors. If it has one signature, register it in Builtins from an init
// here and sqlfe finds it by name; if it is overloaded or polymorphic,
// add its resolution (which argument types, which result type) to
// sqlfe's polyFuncs beside its kind's (datefuncs.go, strfuncs.go, ...),
// calling the body here. A function that reads or changes the session
// (current_setting, nextval, txid_current) is sqlfe's alone.
//
// Files: doc.go, context.go (Context, Builtin, Builtins), text.go (the
// string functions: substr, trim, left, right, repeat, split_part,
// concat, lpad, rpad, format, the regexp functions, md5, quote_ident,
// quote_literal, length, lower, upper, pg_size_pretty, ...), math.go (abs, sign, round, trunc, ceil, floor,
// log, power, the float functions, and the arithmetic operators: Arith,
// Negate), formatting.go (to_char, to_timestamp, to_date as
// PostgreSQL's formatting.c, with formatting_interval.go for to_char of
// an interval), date.go (extract, date_part, date_trunc, make_date,
// make_timestamp, to_timestamp(double), age, date ± integer),
// interval.go (the operators of interval and time, justify_*), json.go
// (json's operators, to_json, json[b]_build_object, json[b]_typeof,
// jsonb_set, the element text of json[b]_agg and of a whole row),
// array.go (the array functions and ||, @>, <@, && on arrays),
// pattern.go (LIKE, ILIKE, SIMILAR TO and ~ as Go regular expressions;
// substring(... FROM ...)), compare.go (CmpOp, row comparisons), srf.go
// (the rows of generate_series, regexp_matches,
// json[b]_array_elements[_text], json[b]_object_keys).
package eval

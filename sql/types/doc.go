// Package types is the SQL layer's datums: the Type enumeration, Value (a
// datum with its type and NULL flag) and its constructors, each type's
// text and binary I/O as PostgreSQL's typinput/typoutput and
// typreceive/typsend functions have them (ParseText, ParseBinary,
// Value.AppendText, Value.AppendBinary, Value.String), comparison
// (Compare), the casts between types (Cast, CastMod, ApplyMod, CanCast) and
// the value arithmetic of numeric and the floats.
//
// Who calls it: sqlfe (analysis, the expression compiler, the executor,
// the catalog and its row encodings) and pgwire (parameters and results on
// the wire). It imports neither of them, nor the engine, nor pg_query: a
// datum knows nothing of tables or parse trees.
//
// Invariants:
//   - A Value's datum is in one field, by type: I for boolean (0/1),
//     integer and bigint; A for integer[] and bigint[] (but S, their
//     text, for one with a NULL element); S for every other
//     type, in the canonical text form ParseText returns (the other arrays
//     as array_out prints them, {a,"b c",NULL}: array.go; numeric as
//     numeric_out prints it, timestamps as PostgreSQL's DateStyle ISO,
//     real and double precision in the shortest form that reads back,
//     uuid lower-case with hyphens, bytea its raw bytes, jsonb normalised).
//     So two equal values of one type have equal fields, and S can be
//     stored as it is.
//   - The Type numbers are stored in the catalog (a Column's type): a new
//     type goes at the end of the enumeration, never between.
//   - NoKeyType types (numeric, date, the timestamps, interval, the
//     floats, json and jsonb, the arrays) are held as text that does not sort as their
//     values, so their text cannot be a key; all but json and jsonb have an
//     ordered key form instead (keyenc.go: KeyInt, KeyFloat, NumericKey,
//     IntervalKey), which the catalog's typed key format uses. Every other
//     type's S (or I) sorts as the type does.
//   - Errors are *pgerror.Error with PostgreSQL's SQLSTATE and wording:
//     22P02 bad text input, 22P03 bad binary input, 22003 out of range,
//     22008/22007 bad dates and times, 22021 invalid UTF-8 or NUL
//     (CheckEncoding, applied to all text input), 22001 too long for a
//     varchar(n) or character(n) at assignment.
//   - Enum types are made at run time (enum.go): each gets a Type number
//     from FirstEnum up when created or loaded, never stored (a column
//     stores its enum's OID), and its definition in a registry that is
//     the process's; a definition is never changed in place. A value's
//     S is its label, its I OrderKey of its float4 sort order, by which it
//     compares, is a key and is stored. An enum type's number is even; the
//     next, odd, is its array type's.
//   - A type whose I/O lives in a file of its own (uuid.go, bytea.go,
//     json.go, interval.go, timeofday.go) registers an extType in ExtTypes from an init; the
//     switches of types.go fall back to the registry, so adding one such
//     type touches no switch. ExtTypes is read-only after init.
//
// Files: types.go (Type, Value, OIDs, text and binary I/O), array.go
// (the one-dimensional arrays of integer, bigint, text, boolean, numeric,
// double precision, uuid, date and timestamptz: array_in, array_out,
// array_send, array_recv, comparison, element casts), cast.go (Mod, Cast, CastMod, ApplyMod, Compare), numeric.go, numeric_special.go (numeric NaN and the infinities), numeric_math.go (sqrt, exp, ln, log and a non-integer power of numeric),
// float.go, datetime.go (date, timestamptz, date_trunc, extract),
// timestamp.go, interval.go (interval: input, output, comparison and
// arithmetic as PostgreSQL 15's; interval_typmod.go its typmods; testdata/ holds PostgreSQL's answers to
// its cases and gen.sh, which asks them again), timeofday.go (time),
// uuid.go, bytea.go, enum.go (enum types), json.go (json and jsonb: the parser,
// normalisation, the operators' node walks), encoding.go (CheckEncoding).
package types

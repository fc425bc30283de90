package sqlfe

import (
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// SET and SHOW by name, as PostgreSQL 15.18 answered: unknown names are
// 42704, dotted names are custom placeholders, PostgreSQL's own parameters
// tupled does not implement keep their context's refusal (55P02) or 0A000,
// and SHOW gives their default.
func TestSettingNames(t *testing.T) {
	_, s := newTestSession(t)
	mustFail(t, s, "SET foo = 1", pgerror.CodeUndefinedObject, `unrecognized configuration parameter "foo"`)
	mustFail(t, s, "SHOW foo", pgerror.CodeUndefinedObject, `unrecognized configuration parameter "foo"`)
	mustFail(t, s, "RESET foo", pgerror.CodeUndefinedObject, `unrecognized configuration parameter "foo"`)
	mustFail(t, s, "SELECT current_setting('foo')", pgerror.CodeUndefinedObject, `unrecognized configuration parameter "foo"`)
	mustFail(t, s, "SELECT set_config('foo', 'v', false)", pgerror.CodeUndefinedObject, `unrecognized configuration parameter "foo"`)
	// custom placeholders
	mustRun(t, s, "SET myapp.x = 1; SHOW myapp.x; SHOW MyApp.X", "SET\n1\nSHOW\n1\nSHOW")
	mustFail(t, s, "SHOW myapp.y", pgerror.CodeUndefinedObject, `unrecognized configuration parameter "myapp.y"`)
	mustRun(t, s, "BEGIN; SET LOCAL myapp.z = 5; SHOW myapp.z; COMMIT; SHOW myapp.z", "BEGIN\nSET\n5\nSHOW\nCOMMIT\n\nSHOW")
	mustRun(t, s, "RESET myapp.x; SHOW myapp.x", "RESET\n\nSHOW")
	mustRun(t, s, "SET a.b.c = 2; SHOW a.b.c; SET _a.b$ = 1", "SET\n2\nSHOW\nSET")
	mustRun(t, s, `SET "MyApp.Mixed" = 3; SHOW myapp.mixed`, "SET\n3\nSHOW")
	mustRun(t, s, "SELECT set_config('myapp.q', 'v', false), current_setting('myapp.q')", "v|v\nSELECT 1")
	mustRun(t, s, "SET myapp.x = 1; SET myapp.x TO DEFAULT; SHOW myapp.x", "SET\nSET\n\nSHOW")
	mustRun(t, s, "SET myapp.x = 1; RESET ALL; SHOW myapp.x", "SET\nRESET\n\nSHOW")
	for _, bad := range []string{`"my app".x`, `"1a".b`, `"a.".b`} {
		mustFail(t, s, "SET "+bad+" = 1", pgerror.CodeInvalidName, "")
	}
	// PostgreSQL's parameters by context
	mustFail(t, s, "SET max_connections = 10", pgerror.CodeCantChangeRuntime, `parameter "max_connections" cannot be changed without restarting the server`)
	mustFail(t, s, "RESET max_connections", pgerror.CodeCantChangeRuntime, `parameter "max_connections" cannot be changed without restarting the server`)
	mustFail(t, s, "SET log_timezone = 'UTC'", pgerror.CodeCantChangeRuntime, `parameter "log_timezone" cannot be changed now`)
	mustFail(t, s, "SET block_size = 1", pgerror.CodeCantChangeRuntime, `parameter "block_size" cannot be changed`)
	mustFail(t, s, "SET server_version_num = 1", pgerror.CodeCantChangeRuntime, `parameter "server_version_num" cannot be changed`)
	mustFail(t, s, "SET log_connections = on", pgerror.CodeCantChangeRuntime, `parameter "log_connections" cannot be set after connection start`)
	mustFail(t, s, "SET enable_hashjoin = off", pgerror.CodeFeatureNotSupp, `configuration parameter "enable_hashjoin" is not supported`)
	mustFail(t, s, "RESET enable_hashjoin", pgerror.CodeFeatureNotSupp, "")
	mustRun(t, s, "SHOW enable_hashjoin; SHOW server_version_num; SHOW role", "on\nSHOW\n150018\nSHOW\nnone\nSHOW")
	mustFail(t, s, "SHOW block_size", pgerror.CodeFeatureNotSupp, `configuration parameter "block_size" is not supported`)
	// SHOW's column is PostgreSQL's spelling of the name
	for name, col := range map[string]string{"datestyle": "DateStyle", "TIMEZONE": "TimeZone", "lock_timeout": "lock_timeout", "myapp.mixed": "myapp.mixed"} {
		st, err := s.Prepare("SHOW "+name, nil)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := s.Describe(st)
		if len(cols) != 1 || cols[0].Name != col {
			t.Fatalf("SHOW %s: columns %+v, want %s", name, cols, col)
		}
	}
	s.EndGroup()
}

// Every parameter tupled implements is one PostgreSQL has: the generated
// list must not make a working name unknown.
func TestSettingNamesCoverImplemented(t *testing.T) {
	_, s := newTestSession(t)
	for k := range s.settings {
		if _, ok := pgSettings[k]; !ok {
			t.Errorf("%s is not in pgSettings", k)
		}
	}
	for _, k := range []string{"deadlock_timeout", "lock_timeout", "statement_timeout", "transaction_isolation", "default_transaction_isolation", "transaction_read_only", "default_transaction_read_only", "in_hot_standby", "idle_in_transaction_session_timeout", "synchronous_commit"} {
		if _, ok := pgSettings[k]; !ok {
			t.Errorf("%s is not in pgSettings", k)
		}
	}
	if len(pgSettings) < 350 {
		t.Fatalf("pgSettings has %d names", len(pgSettings))
	}
}

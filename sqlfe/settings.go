package sqlfe

//go:generate go run gen_pgsettings.go

import (
	"strconv"
	"strings"

	"github.com/tupled/tupled/sql/pgerror"
)

// pgSetting is one of PostgreSQL 15's configuration parameters
// (pgsettings.go, generated from the oracle's pg_settings).
//
// Session settings follow PostgreSQL's GUC rules by name:
//   - a parameter tupled implements (session.go's getSetting/setSetting)
//     behaves as implemented;
//   - another parameter PostgreSQL has is known but not implemented: SHOW
//     gives PostgreSQL's default for a parameter a session could set
//     (contexts user and superuser) and 0A000 for a server-wide one; SET is
//     55P02 where PostgreSQL refuses it too (postmaster, sighup, internal,
//     backend contexts), else 0A000;
//   - a dotted name (myapp.x) is a custom placeholder, as PostgreSQL's:
//     SET stores any value, SHOW gives it back, RESET makes it empty; a dotted
//     name that is not two or more identifiers is 42602;
//   - any other name is 42704 "unrecognized configuration parameter".
type pgSetting struct {
	name    string // as pg_settings spells it (SHOW's column name)
	context string // pg_settings.context
	def     string // what SHOW prints when nothing set it
}

// SettingContext returns PostgreSQL's context of configuration parameter
// name (pg_settings.context: "user", "superuser", "backend",
// "superuser-backend", "sighup", "postmaster", "internal"), or "" for a name
// PostgreSQL does not have (a custom placeholder or an unknown name). The
// wire server uses it to accept at connection start what PostgreSQL accepts
// only then (the backend contexts).
func SettingContext(name string) string {
	return pgSettings[strings.ToLower(name)].context
}

// isCustomSetting reports whether key (lower case) names a custom
// placeholder parameter: not one of PostgreSQL's, with a dot.
func isCustomSetting(key string) bool {
	_, known := pgSettings[key]
	return !known && strings.Contains(key, ".")
}

// checkCustomName is PostgreSQL's valid_custom_variable_name: two or more
// simple identifiers separated by dots (42602 otherwise).
func checkCustomName(name string) error {
	for _, part := range strings.Split(name, ".") {
		ok := part != ""
		for i, r := range part {
			switch {
			case r == '_' || r >= 0x80 || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'):
			case i > 0 && (r == '$' || (r >= '0' && r <= '9')):
			default:
				ok = false
			}
		}
		if !ok {
			return &pgerror.Error{Code: pgerror.CodeInvalidName, Message: "invalid configuration parameter name \"" + name + "\"",
				Detail: "Custom parameter names must be two or more simple identifiers separated by dots."}
		}
	}
	return nil
}

// unimplementedSetting is the answer to SET (or RESET) of a parameter
// tupled does not implement: PostgreSQL's own refusal where it refuses the
// parameter's context at run time, else 0A000; 42704 for a name
// PostgreSQL does not have.
func unimplementedSetting(name string) error {
	ps, ok := pgSettings[strings.ToLower(name)]
	if !ok {
		return pgerror.Errorf(pgerror.CodeUndefinedObject, "unrecognized configuration parameter %q", name)
	}
	switch ps.context {
	case "postmaster":
		return pgerror.Errorf(pgerror.CodeCantChangeRuntime, "parameter %q cannot be changed without restarting the server", ps.name)
	case "sighup":
		return pgerror.Errorf(pgerror.CodeCantChangeRuntime, "parameter %q cannot be changed now", ps.name)
	case "internal":
		return pgerror.Errorf(pgerror.CodeCantChangeRuntime, "parameter %q cannot be changed", ps.name)
	case "backend", "superuser-backend":
		return pgerror.Errorf(pgerror.CodeCantChangeRuntime, "parameter %q cannot be set after connection start", ps.name)
	}
	return pgerror.NotSupported("configuration parameter %q is not supported", ps.name)
}

// unimplementedShow is SHOW of a parameter tupled does not implement
// (key: lower case, not a custom placeholder that was set).
func unimplementedShow(name, key string) (string, error) {
	ps, ok := pgSettings[key]
	if !ok {
		return "", pgerror.Errorf(pgerror.CodeUndefinedObject, "unrecognized configuration parameter %q", name)
	}
	switch ps.context {
	case "user", "superuser":
		return ps.def, nil
	}
	return "", pgerror.NotSupported("configuration parameter %q is not supported", ps.name)
}

// showName is SHOW's column name for parameter name: PostgreSQL's spelling
// of a parameter it has (DateStyle), else the name in lower case.
func showName(name string) string {
	key := strings.ToLower(name)
	if ps, ok := pgSettings[key]; ok {
		return ps.name
	}
	return key
}

// serverVersionNum is server_version_num for ServerVersion ("15.18" →
// "150018").
func serverVersionNum() string {
	major, minor, _ := strings.Cut(ServerVersion, ".")
	ma, _ := strconv.Atoi(major)
	mi, _ := strconv.Atoi(minor)
	return strconv.Itoa(ma*10000 + mi)
}

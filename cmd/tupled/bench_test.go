package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchFlags: the main job's storage flags exclude each other and say
// so; --pg takes auto, on or off.
func TestBenchFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		errs string
	}{
		{[]string{"bench", "forshare", "--memory", "--data", t.TempDir()}, "--memory and --data exclude each other"},
		{[]string{"bench", "forshare", "--pg", "maybe"}, "--pg must be auto, on or off"},
		{[]string{"bench", "forshare", "--rounds", "-1"}, "--rounds must be at least 1"},
	} {
		code, out, errs := runCLI(c.args...)
		if code != 2 || !strings.Contains(errs, c.errs) {
			t.Errorf("tupled %v: exit %d\nstdout: %s\nstderr: %s\nwant %q", c.args, code, out, errs, c.errs)
		}
	}
}

// TestBenchForShareDefaults: without flags forshare runs on disk in a temp
// dir with synchronous commit and several alternated rounds; --memory
// brings back the in-memory run, and the JSON says which ran.
func TestBenchForShareDefaults(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		extra   []string
		backend string
		sync    bool
	}{
		{nil, "pebble", true},
		{[]string{"--memory"}, "memory", false},
	} {
		js := filepath.Join(dir, c.backend+".json")
		args := append([]string{"bench", "forshare", "-c", "2", "-s", "1000", "-T", "200ms", "--pg", "off", "--json", js}, c.extra...)
		code, out, errs := runCLI(args...)
		if code != 0 {
			t.Fatalf("tupled %v: exit %d\n%s\n%s", args, code, out, errs)
		}
		var rep struct {
			Rounds int `json:"rounds"`
			Config struct {
				Backend    string `json:"backend"`
				SyncCommit bool   `json:"sync_commit"`
				DirRemoved bool   `json:"dir_removed"`
			} `json:"config"`
		}
		b, _ := os.ReadFile(js)
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Config.Backend != c.backend || rep.Config.SyncCommit != c.sync || rep.Config.DirRemoved != (c.backend != "memory") || rep.Rounds != 5 {
			t.Errorf("tupled %v: %+v (rounds %d)", args, rep.Config, rep.Rounds)
		}
		if !strings.Contains(out, "goal P1 (≥ 0.90): ") {
			t.Errorf("no verdict:\n%s", out)
		}
	}
}

// TestBenchStormInjectsByDefault: storm injects deadlocks at
// bench.StormInjectRate without the flag and reports their latency;
// --inject-deadlocks 0 turns that off.
func TestBenchStormInjectsByDefault(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		extra []string
		want  bool
	}{
		{nil, true},
		{[]string{"--inject-deadlocks", "0"}, false},
	} {
		js := filepath.Join(dir, fmt.Sprint(len(c.extra), ".json"))
		args := append([]string{"bench", "storm", "-c", "8", "-T", "1200ms", "-P", "0", "--variants", "default", "--json", js}, c.extra...)
		code, out, errs := runCLI(args...)
		if code != 0 {
			t.Fatalf("tupled %v: exit %d\n%s\n%s", args, code, out, errs)
		}
		var rep struct {
			Results []struct {
				Extra map[string]float64 `json:"extra"`
			} `json:"results"`
		}
		b, _ := os.ReadFile(js)
		if err := json.Unmarshal(b, &rep); err != nil || len(rep.Results) != 1 {
			t.Fatalf("%v: %v", err, string(b))
		}
		x := rep.Results[0].Extra
		_, hasP99 := x["deadlock detection latency p99 ms"]
		if got := x["injected deadlocks"] > 0 && hasP99 && x["deadlock detection latencies measured"] > 0; got != c.want {
			t.Errorf("tupled %v: injected and measured %v, want %v: %v", args, got, c.want, x)
		}
	}
}

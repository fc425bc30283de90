package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestStormSmoke runs every deadlock strategy of the storm workload for a
// moment with few clients, a 5 ms deadlock timeout and injected deadlocks:
// transactions commit under every strategy, the storm itself never makes a
// deadlock victim (it has no deadlock), and under default the injected
// deadlocks are detected and their latency reported.
func TestStormSmoke(t *testing.T) {
	w, ok := Lookup("storm")
	if !ok {
		t.Fatal("storm not registered")
	}
	var out bytes.Buffer
	cfg := &Config{
		Clients:         16,
		Duration:        600 * time.Millisecond,
		Progress:        200 * time.Millisecond,
		DeadlockTimeout: 5 * time.Millisecond,
		InjectDeadlocks: 40,
		HotRows:         3,
		SyncCommit:      true,
		Seed:            1,
		Out:             &out,
	}
	start := time.Now()
	rep, err := Run(context.Background(), w, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("storm smoke: %v", time.Since(start))
	if got, want := len(rep.Results), len(w.Variants(cfg)); got != want {
		t.Fatalf("%d variants ran, want %d\n%s", got, want, out.String())
	}
	if rep.Baseline != "off" {
		t.Errorf("baseline %q, want off", rep.Baseline)
	}
	for _, r := range rep.Results {
		if r.Transactions == 0 {
			t.Errorf("%s: no transaction committed\n%s", r.Variant, out.String())
		}
		if n := r.Failures["40P01"]; n > 0 {
			t.Errorf("%s: %d storm transactions were deadlock victims; the storm has no deadlock", r.Variant, n)
		}
		if r.Extra["deadlock_timeout_ms"] != 5 {
			t.Errorf("%s: deadlock_timeout_ms = %v, want 5", r.Variant, r.Extra["deadlock_timeout_ms"])
		}
		if _, ok := r.Extra["Go scheduler latency p99 ms"]; !ok {
			t.Errorf("%s: no scheduler latency reported", r.Variant)
		}
		if r.Extra["injected deadlocks"] == 0 {
			t.Errorf("%s: no deadlock was injected\n%s", r.Variant, out.String())
		}
		switch r.Variant {
		case "default":
			if r.Extra["injected deadlocks detected"] == 0 {
				t.Errorf("default detected no injected deadlock\n%s", out.String())
			}
			p99, ok := r.Extra["deadlock detection latency p99 ms"]
			if !ok || p99 <= 0 {
				t.Errorf("default: no detection latency reported: %v", r.Extra)
			}
			// Every detected pair is one latency of the distribution.
			if n := r.Extra["deadlock detection latencies measured"]; n != r.Extra["injected deadlocks detected"] {
				t.Errorf("default: %v latencies measured for %v detected deadlocks", n, r.Extra["injected deadlocks detected"])
			}
		case "off":
			if _, ok := r.Extra["deadlock detection latencies measured"]; ok {
				t.Errorf("off reports detection latencies")
			}
			if n := r.Extra["injected deadlocks detected"]; n != 0 {
				t.Errorf("off detected %v deadlocks", n)
			}
			if _, ok := r.Extra["deadlock detection latency p99 ms"]; ok {
				t.Errorf("off reports a detection latency")
			}
		}
	}
	for _, want := range []string{"== storm: default", "deadlock detection latency p50 ms = ", "/off", "injected deadlocks detected = "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"deadlock detection latency p99 ms"`) {
		t.Errorf("JSON lacks the detection latency")
	}
}

// TestStormVariants: "<strategy>@<timeout>" overrides the timeout; every
// strategy is a variant.
func TestStormVariants(t *testing.T) {
	w := &storm{}
	all := w.All()
	for _, v := range []string{"default", "off", "classic", "shared-first", "single-checker", "single-memo", "classic@1s", "default@10ms"} {
		found := false
		for _, a := range all {
			found = found || a == v
		}
		if !found {
			t.Errorf("All() lacks %q", v)
		}
	}
	s, d, err := stormVariant(&Config{}, "classic@1s")
	if err != nil || s != "classic" || d != time.Second {
		t.Errorf("classic@1s: %q %v %v", s, d, err)
	}
	s, d, err = stormVariant(&Config{}, "default")
	if err != nil || s != "default" || d != 10*time.Millisecond {
		t.Errorf("default: %q %v %v", s, d, err)
	}
	if (&storm{}).DefaultClients() != 1000 {
		t.Error("storm should default to 1000 clients")
	}
}

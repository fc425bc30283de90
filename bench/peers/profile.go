package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// profileEnv names a directory: when set, each child writes a CPU profile
// of its workload (not of opening the system) there, as
// SYSTEM-WORKLOAD-PID.pprof, to be read with `go tool pprof`.
const profileEnv = "TUPLED_PEERS_CPUPROFILE"

// startProfile starts the child's CPU profile if profileEnv asks for one and
// returns the function that ends it.
func startProfile(sys, workload string) (stop func(), err error) {
	dir := os.Getenv(profileEnv)
	if dir == "" {
		return func() {}, nil
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.pprof", sys, workload, os.Getpid()))
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", profileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", profileEnv, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

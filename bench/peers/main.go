// Command peers runs tupled's on-disk workloads side by side with the
// stores a Go developer would embed instead — bbolt, badger, pebble with an
// application-level lock table, SQLite — each system in a process of its
// own, rounds alternated between systems, and prints the ratio table
// (tupled/peer, above 1 = tupled faster), every system's tps, p50/p99 and
// peak RSS, and the correctness checks' verdicts. See README.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// childEnv marks a child process: the program re-executes itself with it
// set, and the child runs one system's workload and prints its result.
const childEnv = "TUPLED_PEERS_CHILD"

func main() {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain(os.Args[1:]))
	}
	os.Exit(parentMain(os.Args[1:], os.Stdout, os.Stderr))
}

// sizeFlags registers the workload sizes on fs, with the defaults of a
// full run.
func sizeFlags(fs *flag.FlagSet, c *config) {
	fs.IntVar(&c.Rows, "rows", 200_000, "kv rows for the read and scan workloads (the issue's figure: 1000000)")
	fs.IntVar(&c.ValueSize, "value", 100, "bytes per kv value (at least 8)")
	fs.IntVar(&c.Accounts, "accounts", 100_000, "bank accounts")
	fs.IntVar(&c.Hot, "hot-accounts", 100, "the accounts bankhot's transfers use (the first N of -accounts)")
	fs.Int64Var(&c.Balance, "balance", 1000, "each account's starting balance")
	fs.IntVar(&c.Jobs, "jobs", 5000, "jobs the queue drains (the issue's figure: 10000)")
	fs.IntVar(&c.Bucket, "bucket", 1000, "jobs per point of the queue's jobs/s curve (first vs last)")
	fs.IntVar(&c.Clients, "clients", 30, "concurrent clients (reads, bank) and queue workers")
	fs.DurationVar(&c.Duration, "duration", time.Second, "how long each read and bank round runs")
	fs.IntVar(&c.Writes, "writes", 500, "durable single-row writes, one after the other (write workload)")
	fs.DurationVar(&c.QueueMax, "queue-max", 30*time.Second, "the queue's time limit; a drain past it is reported unfinished (DNF)")
}

func (c *config) args() []string {
	return []string{
		fmt.Sprint("-rows=", c.Rows), fmt.Sprint("-value=", c.ValueSize),
		fmt.Sprint("-accounts=", c.Accounts), fmt.Sprint("-hot-accounts=", c.Hot), fmt.Sprint("-balance=", c.Balance),
		fmt.Sprint("-jobs=", c.Jobs), fmt.Sprint("-bucket=", c.Bucket),
		fmt.Sprint("-clients=", c.Clients), fmt.Sprint("-duration=", c.Duration),
		fmt.Sprint("-writes=", c.Writes), fmt.Sprint("-queue-max=", c.QueueMax),
	}
}

func (c *config) validate() error {
	switch {
	case c.Rows < 3 || c.ValueSize < 8 || c.Accounts < 2 || c.Jobs < 1 || c.Bucket < 1 ||
		c.Clients < 1 || c.Writes < 1 || c.Duration <= 0 || c.QueueMax <= 0:
		return fmt.Errorf("sizes out of range: need rows ≥ 3, value ≥ 8, accounts ≥ 2, and jobs, bucket, clients, writes, duration, queue-max > 0")
	}
	return nil
}

// childMain runs one workload of one system and prints its result as JSON
// on stdout; it returns the exit status (an error goes to stderr).
func childMain(args []string) int {
	fs := flag.NewFlagSet("peers child", flag.ContinueOnError)
	var cfg config
	sizeFlags(fs, &cfg)
	sys := fs.String("system", "", "system")
	wl := fs.String("workload", "", "workload")
	dir := fs.String("dir", "", "data directory")
	fs.StringVar(&fault, "fault", "", "inject a bug (tests only)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fault == "crash" {
		fmt.Fprintln(os.Stderr, "peers: -fault crash: exiting before the result")
		return 3
	}
	res, err := runChild(context.Background(), *sys, *wl, *dir, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "peers: %s %s: %v\n", *sys, *wl, err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		return 1
	}
	return 0
}

// splitList parses a comma-separated list of names from all (or "all")
// and, named only, optional.
func splitList(s string, all []string, optional ...string) ([]string, error) {
	if s == "" || s == "all" {
		return all, nil
	}
	var out []string
	for _, x := range strings.Split(s, ",") {
		x = strings.TrimSpace(x)
		found := false
		for _, a := range append(all[:len(all):len(all)], optional...) {
			found = found || a == x
		}
		if !found {
			return nil, fmt.Errorf("unknown %q (want some of %s)", x, strings.Join(append(all[:len(all):len(all)], optional...), ","))
		}
		out = append(out, x)
	}
	return out, nil
}

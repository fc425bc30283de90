package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
)

// command is one subcommand. New subcommands (bench, serve, ...) add an entry
// to commands.
type command struct {
	name    string
	summary string
	usage   string // argument synopsis
	help    string // longer description
	// run runs the command; it returns errUsage (possibly wrapped) for bad usage.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// errUsage marks a usage error: the message is printed with the command's
// usage and the exit status is 2.
var errUsage = errors.New("usage")

type usageError struct{ msg string }

func (e *usageError) Error() string   { return e.msg }
func (e *usageError) Is(t error) bool { return t == errUsage }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "tupled: no command given")
		mainUsage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && name == "help" {
			c, ok := commands[args[1]]
			if !ok {
				fmt.Fprintf(stderr, "tupled help: unknown command %q\n", args[1])
				mainUsage(stderr)
				return 2
			}
			commandUsage(stdout, c)
			return 0
		}
		mainUsage(stdout)
		return 0
	case "-version", "--version":
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "tupled: unknown command %q\n", name)
		mainUsage(stderr)
		return 2
	}
	err := c.run(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "tupled %s: %v\n", c.name, err)
		fmt.Fprintf(stderr, "usage: tupled %s %s\nRun 'tupled help %s' for details.\n", c.name, c.usage, c.name)
		return 2
	default:
		fmt.Fprintf(stderr, "tupled %s: %v\n", c.name, err)
		return 1
	}
}

func mainUsage(w io.Writer) {
	fmt.Fprintln(w, "tupled is PostgreSQL's row-locking machinery as a Go storage engine.")
	fmt.Fprintln(w, "\nUsage:\n\n\ttupled <command> [arguments]\n\nCommands:")
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "\t%-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\t%-8s %s\n", "help", "show help for a command")
	fmt.Fprintln(w, "\nRun 'tupled help <command>' for details.")
}

func commandUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: tupled %s %s\n\n%s\n", c.name, c.usage, strings.TrimSpace(c.help))
}

// newFlagSet returns a flag set for a command. It prints nothing itself: a
// bad flag becomes a usage error, -h prints the command's help to stdout.
func newFlagSet(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet("tupled "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args for command c.
func parseFlags(c *command, fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			commandUsage(stdout, c)
			fmt.Fprintln(stdout, "\nFlags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return err
		}
		return usagef("%v", err)
	}
	return nil
}

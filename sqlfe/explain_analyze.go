package sqlfe

import (
	"context"
	"fmt"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// EXPLAIN's options, and EXPLAIN ANALYZE: the SELECT planned afresh for
// each execution, every node of its plan wrapped in an analyzed node that
// counts its runs (loops) and rows and times them, the plan run (its rows
// discarded), then drawn as EXPLAIN draws it with PostgreSQL's
// "(actual time=startup..total rows=N loops=L)" after each node's line
// (per loop, in milliseconds, as explain.c prints them), and the summary's
// "Planning Time:" and "Execution Time:". This layer has no cost model, so
// a line never has PostgreSQL's "(cost=…)" part: the shape is COSTS off's.
//
// Operators push rows to their parent's callback (query_exec.go), so a
// node's time is the time inside its run less the time its callback took
// (the nodes above it): what PostgreSQL's pull model measures, the node
// and the nodes below it.

// explainOpts is EXPLAIN's options (PostgreSQL's ExplainState).
type explainOpts struct {
	analyze, timing, summary bool
}

// explainOptions reads EXPLAIN's options as PostgreSQL 15 does: a
// Boolean option without a value is true; TIMING and WAL require ANALYZE;
// SUMMARY defaults to ANALYZE, TIMING to true. What tupled cannot print
// (BUFFERS, WAL, SETTINGS on; a format but text) is 0A000.
func explainOptions(opts []*pg.Node) (explainOpts, error) {
	var o explainOpts
	timingSet, summarySet, wal := false, false, false
	o.timing = true
	for _, n := range opts {
		d := n.GetDefElem()
		name := d.GetDefname()
		if name == "format" {
			if f := strings.ToLower(defElemString(d)); f != "text" {
				if f != "json" && f != "xml" && f != "yaml" {
					return o, pgerror.Errorf(pgerror.CodeInvalidParamValue, "unrecognized value for EXPLAIN option \"format\": \"%s\"", defElemString(d)).At(d.Location)
				}
				return o, pgerror.NotSupported("EXPLAIN (FORMAT %s) is not supported", strings.ToUpper(f))
			}
			continue
		}
		var on bool
		switch name {
		case "analyze", "verbose", "costs", "buffers", "wal", "timing", "summary", "settings":
			v, err := defBoolean(d)
			if err != nil {
				return o, err
			}
			on = v
		default:
			return o, pgerror.Errorf(pgerror.CodeSyntax, "unrecognized EXPLAIN option \"%s\"", name).At(d.Location)
		}
		switch name {
		case "analyze":
			o.analyze = on
		case "timing":
			o.timing, timingSet = on, true
		case "summary":
			o.summary, summarySet = on, true
		case "wal":
			wal = on
		case "buffers", "settings":
			if on {
				return o, pgerror.NotSupported("EXPLAIN option %s is not supported", strings.ToUpper(name))
			}
		}
	}
	if wal && !o.analyze {
		return o, pgerror.Errorf(pgerror.CodeInvalidParamValue, "EXPLAIN option WAL requires ANALYZE")
	}
	if timingSet && o.timing && !o.analyze {
		return o, pgerror.Errorf(pgerror.CodeInvalidParamValue, "EXPLAIN option TIMING requires ANALYZE")
	}
	if wal {
		return o, pgerror.NotSupported("EXPLAIN option WAL is not supported")
	}
	if !summarySet {
		o.summary = o.analyze
	}
	return o, nil
}

// defBoolean is an option's Boolean value (PostgreSQL's defGetBoolean):
// none is true; 0 or 1; true, false, on or off.
func defBoolean(d *pg.DefElem) (bool, error) {
	if d.Arg == nil {
		return true, nil
	}
	if iv := d.Arg.GetInteger(); iv != nil {
		switch iv.Ival {
		case 0:
			return false, nil
		case 1:
			return true, nil
		}
	} else {
		switch strings.ToLower(defElemString(d)) {
		case "true", "on":
			return true, nil
		case "false", "off":
			return false, nil
		}
	}
	return false, pgerror.Errorf(pgerror.CodeSyntax, "%s requires a Boolean value", d.Defname)
}

// planExplainAnalyze plans EXPLAIN ANALYZE of sel: checked now (its
// errors and parameter types are the statement's), planned again by each
// execution, whose counts the plan's nodes then hold.
func (s *Session) planExplainAnalyze(sel *pg.SelectStmt, params *[]types.Type, o explainOpts) (*plan, error) {
	if _, _, err := s.buildQuery(sel, params, false); err != nil {
		return nil, err
	}
	return &plan{cols: []catalog.Column{{Name: "QUERY PLAN", Type: types.TText}}, usesT: true, run: func(ctx context.Context, s *Session, pv []types.Value) (*Result, error) {
		start := time.Now()
		root, _, err := s.buildQuery(sel, params, false)
		if err != nil {
			return nil, err
		}
		root = analyzeTree(root, o.timing)
		planning := time.Since(start)
		start = time.Now()
		if _, err := runQuery(ctx, s, pv, root); err != nil {
			return nil, err
		}
		execution := time.Since(start)
		var w strings.Builder
		root.explain(&w, 0)
		if o.summary {
			fmt.Fprintf(&w, "Planning Time: %.3f ms\nExecution Time: %.3f ms\n", ms(planning), ms(execution))
		}
		return &Result{Rows: planLines(w.String()), Tag: "EXPLAIN"}, nil
	}}, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// planLines is an EXPLAIN's text as its rows, one per line.
func planLines(text string) [][]types.Value {
	var rows [][]types.Value
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		rows = append(rows, []types.Value{types.Text(line)})
	}
	return rows
}

// parentNode is a plan node with inputs: where they are held, so that
// analyzeTree can wrap them.
type parentNode interface{ inputs() []*relNode }

func (n *aggNode) inputs() []*relNode        { return []*relNode{&n.in} }
func (n *lateralScan) inputs() []*relNode    { return []*relNode{&n.root} }
func (n *lockRowsNode) inputs() []*relNode   { return []*relNode{&n.in} }
func (n *filterNode) inputs() []*relNode     { return []*relNode{&n.in} }
func (n *projectNode) inputs() []*relNode    { return []*relNode{&n.in} }
func (n *nestedLoop) inputs() []*relNode     { return []*relNode{&n.left, &n.right} }
func (n *sortNode) inputs() []*relNode       { return []*relNode{&n.in} }
func (n *distinctNode) inputs() []*relNode   { return []*relNode{&n.in} }
func (n *distinctOnNode) inputs() []*relNode { return []*relNode{&n.in} }
func (n *limitNode) inputs() []*relNode      { return []*relNode{&n.in} }
func (n *truncNode) inputs() []*relNode      { return []*relNode{&n.in} }
func (n *setOpNode) inputs() []*relNode      { return []*relNode{&n.left, &n.right} }
func (n *projectSetNode) inputs() []*relNode { return []*relNode{&n.in} }
func (n *windowNode) inputs() []*relNode     { return []*relNode{&n.in} }

// analyzeTree wraps every node of the plan under n (n too) in an
// analyzed node. (A hash join whose outer side is then no longer a bare
// table scan probes row by row, not in batches: probeInBatches.)
func analyzeTree(n relNode, timing bool) relNode {
	if p, ok := n.(parentNode); ok && n != nil {
		for _, in := range p.inputs() {
			if *in != nil {
				*in = analyzeTree(*in, timing)
			}
		}
	}
	return &analyzed{in: n, timing: timing}
}

// analyzed counts and times one plan node's runs.
type analyzed struct {
	in               relNode
	timing           bool
	loops, rows      int64
	startup, elapsed time.Duration // over all loops: to the first row, to the end
}

func (a *analyzed) run(q *qctx, fn func(row []types.Value) error) error {
	a.loops++
	start := time.Now()
	var above time.Duration // in fn: the nodes above
	n := int64(0)
	err := a.in.run(q, func(row []types.Value) error {
		t := time.Now()
		if n == 0 {
			a.startup += t.Sub(start) - above
		}
		n++
		err := fn(row)
		above += time.Since(t)
		return err
	})
	el := time.Since(start) - above
	if n == 0 {
		a.startup += el
	}
	a.elapsed += el
	a.rows += n
	return err
}

// explain is the node's own drawing with its counts after its first line
// (a node that draws no line of its own, a projection, adds none).
func (a *analyzed) explain(w *strings.Builder, depth int) {
	var b strings.Builder
	a.in.explain(&b, depth)
	text := b.String()
	switch a.in.(type) {
	case *projectNode, *truncNode:
		w.WriteString(text)
		return
	}
	i := strings.IndexByte(text, '\n')
	if i < 0 {
		i = len(text)
	}
	w.WriteString(text[:i])
	w.WriteString(a.actual())
	w.WriteString(text[i:])
}

// actual is explain.c's "(actual …)" of the node, per loop.
func (a *analyzed) actual() string {
	if a.loops == 0 {
		return " (never executed)"
	}
	loops := float64(a.loops)
	rows := float64(a.rows) / loops
	if !a.timing {
		return fmt.Sprintf(" (actual rows=%.0f loops=%.0f)", rows, loops)
	}
	return fmt.Sprintf(" (actual time=%.3f..%.3f rows=%.0f loops=%.0f)", ms(a.startup)/loops, ms(a.elapsed)/loops, rows, loops)
}

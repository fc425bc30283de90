package bench

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The plot of a run (--plot FILE.png or .svg).
//
// Top panel: tps of every variant on the run's time line, one point per
// whole interval of its series (no synthetic start at zero, no partial
// last interval: RunVariant drops it), each variant-round a separate
// segment so that alternated rounds show as they ran. Bottom panel (with
// two or more rounds): each ratio to the baseline per round, beside the
// headline ratio's references (1.0, the goal's threshold, PostgreSQL 15's
// ratio, the seed's). Legends sit in a column right of the data, the
// title inside a margin.

const (
	plotWidth   = 11 * vg.Inch
	panelHeight = 4 * vg.Inch
	plotMargin  = vg.Length(14) // points, around everything
	legendWidth = 3 * vg.Inch
)

// WritePlot draws rep into a PNG (or SVG, by path's extension).
func WritePlot(path string, rep *Report) error {
	top, topLegend, err := tpsPanel(rep)
	if err != nil {
		return err
	}
	panels := []*plot.Plot{top}
	legends := []plot.Legend{topLegend}
	if len(rep.allRounds()) > 1 {
		if p, l, ok, err := ratioPanel(rep); err != nil {
			return err
		} else if ok {
			panels = append(panels, p)
			legends = append(legends, l)
		}
	}
	h := panelHeight*vg.Length(len(panels)) + 2*plotMargin
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	c, err := draw.NewFormattedCanvas(plotWidth, h, format)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	inner := draw.Crop(dc, plotMargin, -plotMargin, plotMargin, -plotMargin)
	innerH := inner.Max.Y - inner.Min.Y
	innerW := inner.Max.X - inner.Min.X
	for i, p := range panels {
		// Panel i from the top.
		ph := innerH / vg.Length(len(panels))
		pc := draw.Crop(inner, 0, 0, innerH-ph*vg.Length(i+1), -ph*vg.Length(i))
		if i > 0 {
			pc = draw.Crop(pc, 0, 0, 0, -plotMargin) // a gap between the panels
		}
		p.Draw(draw.Crop(pc, 0, -legendWidth, 0, 0))
		lc := draw.Crop(pc, innerW-legendWidth+plotMargin, 0, 0, -(p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding))
		legends[i].Draw(lc)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.Padding = vg.Points(3)
	l.TextStyle.Color = color.Black
	return l
}

func newPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(10)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// tpsPanel is the top panel: tps per interval of every variant, on the
// run's time line.
func tpsPanel(rep *Report) (*plot.Plot, plot.Legend, error) {
	where := "in memory"
	if rep.Config.Dir != "" {
		where = "on disk (" + rep.Config.Backend + ")"
		if rep.Config.SyncCommit {
			where += ", synchronous commit"
		}
	}
	title := fmt.Sprintf("tupled bench %s: %d clients, %s rows, %s", rep.Workload, rep.Config.Clients, thousands(rep.Config.Rows), where)
	if n := len(rep.allRounds()); n > 1 {
		title += fmt.Sprintf(", %d alternated rounds", n)
	}
	p := newPanel(title, "time since the first variant started (s)", "transactions per second (tps)")
	p.X.Min, p.Y.Min = 0, 0
	p.X.Tick.Marker = secondsTicks{}
	leg := newLegend()
	idx := map[string]int{}
	var order []string
	for _, round := range rep.allRounds() {
		for _, r := range round {
			i, ok := idx[r.Variant]
			if !ok {
				i = len(order)
				idx[r.Variant] = i
				order = append(order, r.Variant)
			}
			if len(r.Series) == 0 {
				continue
			}
			pts := make(plotter.XYs, 0, len(r.Series))
			for _, iv := range r.Series {
				pts = append(pts, plotter.XY{X: r.Start + iv.At, Y: iv.TPS})
			}
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, leg, err
			}
			l.Color, l.Width = plotutil.Color(i), vg.Points(1.5)
			l.Dashes = plotutil.Dashes(i / 7)
			s.Color, s.Shape = plotutil.Color(i), plotutil.Shape(i)
			p.Add(l, s)
			if !ok {
				leg.Add(r.Variant, l, s)
			}
		}
	}
	return p, leg, nil
}

// ratioPanel is the bottom panel: each ratio to the baseline per round,
// with the headline ratio's references as horizontal lines.
func ratioPanel(rep *Report) (*plot.Plot, plot.Legend, bool, error) {
	leg := newLegend()
	title := "tps ratio per round"
	ylabel := "tps ratio"
	if rep.Baseline != "" {
		title = fmt.Sprintf("each variant's tps / %s's tps, per round (1.0 = as fast as %s)", rep.Baseline, rep.Baseline)
		ylabel = "tps / " + rep.Baseline + " tps"
	}
	p := newPanel(title, "round", ylabel)
	p.Y.Min = 0
	ymax := 1.1
	drawn := false
	for i, s := range rep.Spreads {
		if s.Variant == s.Baseline {
			continue
		}
		pts := make(plotter.XYs, len(s.Rounds))
		for j, v := range s.Rounds {
			pts[j] = plotter.XY{X: float64(j + 1), Y: v}
			ymax = max(ymax, v*1.05)
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, leg, false, err
		}
		l.Color, l.Width = plotutil.Color(i), vg.Points(1.5)
		sc.Color, sc.Shape = plotutil.Color(i), plotutil.Shape(i)
		p.Add(l, sc)
		leg.Add(fmt.Sprintf("%s / %s (median %.3f)", s.Variant, s.Baseline, s.Median), l, sc)
		drawn = true
	}
	if !drawn {
		return nil, leg, false, nil
	}
	hline := func(y float64, c color.Color, dashes []vg.Length, label string) {
		f := plotter.NewFunction(func(float64) float64 { return y })
		f.Color, f.Dashes, f.Width = c, dashes, vg.Points(1.2)
		p.Add(f)
		leg.Add(label, f)
	}
	gray := color.RGBA{A: 255, R: 110, G: 110, B: 110}
	hline(1, color.Black, nil, "1.0: the lock is free")
	if ref := rep.Reference; ref != nil {
		hline(ref.Threshold, color.RGBA{R: 200, A: 255}, []vg.Length{vg.Points(6), vg.Points(3)},
			fmt.Sprintf("goal %s: %s / %s ≥ %.2f", ref.Goal, ref.Variant, ref.Baseline, ref.Threshold))
		pgv, pgl := ref.PGRecorded, fmt.Sprintf("PostgreSQL 15: %.2f (recorded)", ref.PGRecorded)
		if pg := rep.PostgreSQL; pg != nil && pg.Measured {
			if s, ok := pg.spread(ref.Variant, ref.Baseline); ok {
				pgv, pgl = s.Median, fmt.Sprintf("PostgreSQL 15, this run: %.2f", s.Median)
			}
		}
		hline(pgv, color.RGBA{B: 200, A: 255}, []vg.Length{vg.Points(2), vg.Points(2)}, pgl)
		hline(ref.Seed, gray, []vg.Length{vg.Points(8), vg.Points(4)}, fmt.Sprintf("2012 seed: %.3f", ref.Seed))
	}
	p.X.Min, p.X.Max = 0.5, float64(len(rep.allRounds()))+0.5
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		for r := 1; r <= len(rep.allRounds()); r++ {
			ts = append(ts, plot.Tick{Value: float64(r), Label: fmt.Sprint(r)})
		}
		return ts
	})
	p.Y.Max = ymax
	return p, leg, true, nil
}

// thousands formats n with thousands separators (1,000,000).
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// secondsTicks labels a time axis in whole seconds, a label every 1, 2, 5,
// 10, 20, 50... seconds so that there are at most a dozen, with unlabelled
// ticks every second in between when they fit.
type secondsTicks struct{}

func (secondsTicks) Ticks(min, max float64) []plot.Tick {
	step := 1.0
	for mag := 1.0; ; mag *= 10 {
		found := false
		for _, m := range []float64{1, 2, 5} {
			if (max-min)/(m*mag) <= 12 {
				step, found = m*mag, true
				break
			}
		}
		if found {
			break
		}
	}
	var ts []plot.Tick
	for v := math.Ceil(min); v <= max; v++ {
		t := plot.Tick{Value: v}
		if math.Mod(v, step) == 0 {
			t.Label = strconv.FormatFloat(v, 'f', -1, 64)
		} else if (max - min) > 60 {
			continue // no minor tick every second on a long axis
		}
		ts = append(ts, t)
	}
	return ts
}

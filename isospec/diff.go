package isospec

import (
	"fmt"
	"strings"
)

// Diff returns a line diff of a and b: lines only in a start with "-", lines
// only in b with "+", common lines with " ". Runs of more than three common
// lines are elided, with the line number in a where the next change starts.
func Diff(a, b string) string {
	x := strings.Split(strings.TrimSuffix(a, "\n"), "\n")
	y := strings.Split(strings.TrimSuffix(b, "\n"), "\n")
	// Longest common subsequence table, from the ends.
	n, m := len(x), len(y)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
		ai   int
	}
	var ls []line
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ls = append(ls, line{' ', x[i], i})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ls = append(ls, line{'-', x[i], i})
			i++
		default:
			ls = append(ls, line{'+', y[j], i})
			j++
		}
	}
	const ctx = 3
	keep := make([]bool, len(ls))
	for k, l := range ls {
		if l.op != ' ' {
			for q := max(0, k-ctx); q <= min(len(ls)-1, k+ctx); q++ {
				keep[q] = true
			}
		}
	}
	var out strings.Builder
	skipped := false
	for k, l := range ls {
		if !keep[k] {
			skipped = true
			continue
		}
		if skipped || (k > 0 && !keep[k-1]) {
			fmt.Fprintf(&out, "@@ line %d @@\n", l.ai+1)
		}
		skipped = false
		out.WriteString(string(l.op) + l.text + "\n")
	}
	return out.String()
}

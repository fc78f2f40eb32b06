package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// applyUnified applies a unified diff to old and returns the result, checking every context
// and removed line against old: a diff that does not describe old -> new fails here.
func applyUnified(old, patch string) (string, error) {
	oldLines := splitLines(old)
	lines := splitLines(patch)
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("no ---/+++ header")
	}
	var out []string
	at := 0 // next old line (0-based) not yet copied
	for i := 2; i < len(lines); {
		h := lines[i]
		if !strings.HasPrefix(h, "@@ -") {
			return "", fmt.Errorf("line %d: want a hunk header, got %q", i+1, h)
		}
		f := strings.Fields(h)
		start, _ := strconv.Atoi(strings.Split(f[1][1:], ",")[0])
		oldCount := 1
		if p := strings.Split(f[1], ","); len(p) == 2 {
			oldCount, _ = strconv.Atoi(p[1])
		}
		from := start - 1
		if oldCount == 0 {
			from = start // empty range numbered by the line before it
		}
		if from < at || from > len(oldLines) {
			return "", fmt.Errorf("hunk %q out of order", h)
		}
		out = append(out, oldLines[at:from]...)
		at = from
		i++
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			i++
			noNL := i < len(lines) && strings.HasPrefix(lines[i], `\ No newline`)
			text := l[1:]
			if noNL {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if at >= len(oldLines) || oldLines[at] != text {
					return "", fmt.Errorf("hunk %q: line %d of old is %q, diff says %q", h, at+1, oldLines[min(at, len(oldLines)-1)], text)
				}
				if l[0] == ' ' {
					out = append(out, text)
				}
				at++
			case '+':
				out = append(out, text)
			default:
				return "", fmt.Errorf("bad diff line %q", l)
			}
		}
	}
	out = append(out, oldLines[at:]...)
	return strings.Join(out, ""), nil
}

func TestUnifiedDiffAppliesToRealPlans(t *testing.T) {
	dir := filepath.Join(repoRoot(), "testdata", "plans")
	pairs := [][2]string{
		{"group-aggregate", "group-aggregate-filtered"},
		{"join-inner", "join-inner-other-key"},
		{"join-inner", "join-left"},
		{"dedup-keep-first", "dedup-then-aggregate"},
		{"window-aggregate", "top-n"},
	}
	for _, pr := range pairs {
		a, err1 := os.ReadFile(filepath.Join(dir, pr[0]+".json"))
		b, err2 := os.ReadFile(filepath.Join(dir, pr[1]+".json"))
		if err1 != nil || err2 != nil {
			t.Skipf("oracle plans not present: %v %v", err1, err2)
		}
		for _, ctx := range []int{0, 1, 3} {
			d := UnifiedDiff(pr[0], pr[1], a, b, ctx)
			got, err := applyUnified(string(a), d)
			if err != nil {
				t.Fatalf("%v context %d: %v\n%s", pr, ctx, err, d)
			}
			if got != string(b) {
				t.Errorf("%v context %d: applying the diff does not give NEW", pr, ctx)
			}
			if !strings.HasPrefix(d, "--- "+pr[0]+"\n+++ "+pr[1]+"\n@@ -") {
				t.Errorf("%v: header %q", pr, d[:min(len(d), 60)])
			}
		}
	}
}

func TestUnifiedDiffEdgeCases(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"x\n", "x\n", ""},
		{"a\nb\nc\n", "a\nB\nc\n", "--- o\n+++ n\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"", "a\n", "--- o\n+++ n\n@@ -0,0 +1 @@\n+a\n"},
		{"a\n", "", "--- o\n+++ n\n@@ -1 +0,0 @@\n-a\n"},
		{"a\nb", "a\nc", "--- o\n+++ n\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		// Two changes 8 lines apart with context 3 are two hunks.
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "X\n2\n3\n4\n5\n6\n7\n8\n9\nY\n",
			"--- o\n+++ n\n@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+Y\n"},
	} {
		got := UnifiedDiff("o", "n", []byte(tc.a), []byte(tc.b), 3)
		if got != tc.want {
			t.Errorf("%q -> %q:\n%s\nwant\n%s", tc.a, tc.b, got, tc.want)
		}
		if got != "" {
			if back, err := applyUnified(tc.a, got); err != nil || back != tc.b {
				t.Errorf("%q -> %q: applies to %q, %v", tc.a, tc.b, back, err)
			}
		}
	}
}

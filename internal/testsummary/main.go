// Command testsummary reads `go test -json` events on stdin and prints what plain `go test`
// prints (each package's ok/FAIL line, and the whole output of every failed test), then the
// slowest tests of the run, so every make check log says where its minutes went:
//
//	go test -json ./... | go run ./internal/testsummary -top 15
//
// It exits 1 when a test or package failed or the input holds no package result at all (a build
// that never ran), so the pipe's status is the run's even in a shell without pipefail.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type timing struct {
	name    string
	elapsed float64
}

func main() {
	top := flag.Int("top", 15, "how many of the slowest tests to list")
	flag.Parse()
	failed, err := summarize(os.Stdin, os.Stdout, *top)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}

// summarize copies the plain output of the run from r to w and lists the top slowest tests; it
// reports whether anything failed.
func summarize(r io.Reader, w io.Writer, top int) (failed bool, err error) {
	held := map[string][]string{} // output of running tests, printed only if they fail
	var slow []timing
	results := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(w, string(line)) // a build error or other text go test printed as is
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output": // a package that did not compile (Go 1.24+ reports it so)
			fmt.Fprint(w, e.Output)
		case e.Action == "build-fail":
			failed = true
		case e.Test == "" && e.Action == "output":
			if e.Output != "PASS\n" { // -json makes the test binary say PASS before ok; go test alone does not
				fmt.Fprint(w, e.Output)
			}
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			results++
			failed = failed || e.Action == "fail"
		case e.Action == "output":
			held[key] = append(held[key], e.Output)
		case e.Action == "pass" || e.Action == "skip":
			if !strings.Contains(e.Test, "/") {
				slow = append(slow, timing{strings.TrimPrefix(e.Package, "github.com/statecraft/statecraft/") + " " + e.Test, e.Elapsed})
			}
			delete(held, key)
		case e.Action == "fail":
			failed = true
			fmt.Fprint(w, strings.Join(held[key], ""))
			delete(held, key)
			if !strings.Contains(e.Test, "/") {
				slow = append(slow, timing{strings.TrimPrefix(e.Package, "github.com/statecraft/statecraft/") + " " + e.Test + " (FAIL)", e.Elapsed})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	if results == 0 {
		fmt.Fprintln(w, "testsummary: no package result in the input")
		return true, nil
	}
	sort.SliceStable(slow, func(i, j int) bool { return slow[i].elapsed > slow[j].elapsed })
	fmt.Fprintf(w, "slowest tests (s, package test):\n")
	for i := 0; i < len(slow) && i < top; i++ {
		fmt.Fprintf(w, "  %7.1f  %s\n", slow[i].elapsed, slow[i].name)
	}
	return failed, nil
}

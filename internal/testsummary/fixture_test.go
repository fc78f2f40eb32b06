package main

import (
	"os"
	"testing"
)

// The fixture tests TestSummarize runs through `go test -json`; skipped in a normal run.
func TestFixturePass(t *testing.T) {
	if os.Getenv("TESTSUMMARY_FIXTURE") == "" {
		t.Skip("fixture of TestSummarize")
	}
	t.Log("fixture output")
}

func TestFixtureFail(t *testing.T) {
	if os.Getenv("TESTSUMMARY_FIXTURE") == "" {
		t.Skip("fixture of TestSummarize")
	}
	t.Fatal("fixture failure reason")
}

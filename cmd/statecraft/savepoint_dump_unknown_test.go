package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDumpUnknownSnapshotClass: a keyed header naming a serializer snapshot class statecraft
// cannot skip (the named-window fixture with the version of its window's snapshot changed from
// 3 to 2, so the user-composite layout no longer applies) is an error naming the class, with or
// without --operator; `dump SP` used to skip such an operator and say the savepoint held no
// records (exit 0). The unchanged fixture dumps (TestDumpMatchesOracle).
func TestDumpUnknownSnapshotClass(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "savepoints", "named-window-rocksdb")
	files, err := os.ReadDir(src)
	if err != nil {
		t.Skipf("fixture: %v", err)
	}
	class := []byte("dev.statecraft.oracle.savepoints.NamedWindow$Snapshot\x00\x00\x00\x03")
	dir := t.TempDir()
	changed := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, class); n > 0 {
			b = bytes.ReplaceAll(b, class, append(class[:len(class)-1:len(class)-1], 2))
			changed += n
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if changed == 0 {
		t.Fatal("no NamedWindow snapshot found in the fixture's state files")
	}
	for _, args := range [][]string{{dir}, {dir, "--operator", "uid:named-window-agg"}, {dir, "--state", "window-contents"}} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"savepoint", "dump"}, args...), &stdout, &stderr)
		if code != exitFailure || !strings.Contains(stderr.String(), `unknown serializer snapshot class "dev.statecraft.oracle.savepoints.NamedWindow$Snapshot" (version 2)`) {
			t.Errorf("dump %v: exit %d, stderr %s; want exit %d naming the class", args[1:], code, stderr.String(), exitFailure)
		}
		if stdout.Len() != 0 {
			t.Errorf("dump %v: %d bytes of output beside the error", args[1:], stdout.Len())
		}
	}
}

// TestDumpAmbiguousMapSplit: the per-window map state Flink wrote under a window whose serializer
// statecraft does not know (testdata/savepoints-refused/native-slot-window-fired) holds keys that
// split two ways into namespace and user key; dump stops at the first with one error naming the
// state, the serializer and the ambiguity, exit 1 (the records streamed before it are on stdout,
// as for any entry that fails to decode; statecore/keyed TestOpaqueNamespaceMapSplit checks the
// entries that split one way only against the State Processor API's reading).
func TestDumpAmbiguousMapSplit(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "savepoints-refused", "native-slot-window-fired")
	for _, args := range [][]string{{dir}, {dir, "--state", "fired"}} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"savepoint", "dump"}, args...), &stdout, &stderr)
		msg := stderr.String()
		if code != exitFailure || !strings.Contains(msg, `state("fired")`) || !strings.Contains(msg, "SlotWindow$Snapshot is unknown") || !strings.Contains(msg, "cannot be told") {
			t.Errorf("dump %v: exit %d, stderr %s; want exit %d naming the state, the serializer and the two splits", args[1:], code, msg, exitFailure)
		}
	}
}

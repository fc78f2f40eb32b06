package keyed

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// flink120Expectations lists the expectation files of the savepoints Flink 1.20 wrote
// (testdata/flink-1.20/savepoints, made by FLINK_VERSION=1.20.0 testdata/oracle/run.sh savepoints).
func flink120Expectations(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../../testdata/flink-1.20/savepoints/*.expect.json")
	if len(files) == 0 {
		t.Skip("no Flink 1.20 fixtures in testdata/flink-1.20/savepoints (FLINK_VERSION=1.20.0 testdata/oracle/run.sh savepoints)")
	}
	return files
}

// flink120Expectation is the part of an expectation these tests check the headers against.
type flink120Expectation struct {
	Format    string
	Operators []struct {
		UIDHash     string          `json:"uidHash"`
		KeyedStates []expectedState `json:"keyedStates"`
	}
}

// TestFlink120KeyedStreams reads every keyed-state stream of the 1.20 savepoints: the header
// re-encodes to Flink 1.20's exact bytes, every state the oracle's job declared is in it with
// its kind, TTL flag and Java types, every key group block reads, and rewriting the entries in
// file order reproduces an uncompressed stream byte for byte.
func TestFlink120KeyedStreams(t *testing.T) {
	norm := func(s string) string {
		s = strings.ReplaceAll(s, " ", "")
		return strings.ReplaceAll(s, "dev.statecraft.oracle.savepoints.", "")
	}
	checked, streams, entries := 0, 0, 0
	for _, ef := range flink120Expectations(t) {
		raw, err := os.ReadFile(ef)
		if err != nil {
			t.Fatal(err)
		}
		var exp flink120Expectation
		if err := json.Unmarshal(raw, &exp); err != nil {
			t.Fatalf("%s: %v", ef, err)
		}
		sp, err := savepoint.Open(strings.TrimSuffix(ef, ".expect.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, eo := range exp.Operators {
			if len(eo.KeyedStates) == 0 {
				continue
			}
			var op *metadata.OperatorState
			for _, o := range sp.Metadata.Operators {
				if o.ID.String() == eo.UIDHash {
					op = o
				}
			}
			if op == nil {
				t.Fatalf("%s: no operator %s", ef, eo.UIDHash)
			}
			subs, closeAll, err := OpenSubtasks(sp, op)
			if err != nil {
				t.Fatalf("%s operator %s: %v", ef, eo.UIDHash, err)
			}
			for _, s := range subs {
				streams++
				b, err := s.Header.Encode()
				if err != nil {
					t.Errorf("%s: encode header: %v", s.Name, err)
				} else if !bytes.Equal(b, s.Header.Raw) {
					t.Errorf("%s: re-encoded header differs from Flink 1.20's (%d vs %d bytes)", s.Name, len(b), len(s.Header.Raw))
				}
				checked += checkStateTypes(t, ef, s, eo.KeyedStates, norm)
				if s.Native != nil {
					continue // no canonical stream to rewrite; cmd/statecraft compares its entries with Flink's
				}
				data, err := io.ReadAll(io.NewSectionReader(s.src, 0, s.size))
				if err != nil {
					t.Fatal(err)
				}
				// A subtask may hold no key at all (the window job has 3 keys on 2 subtasks).
				entries += flink120Rewrite(t, s.Name, data, s.Header, s.Handle, int(op.MaxParallelism))
			}
			closeAll()
		}
		sp.Close()
	}
	if checked == 0 || streams == 0 || entries == 0 {
		t.Errorf("checked %d states, %d entries in %d streams; the fixtures hold keyed state, so none is a failure", checked, entries, streams)
	}
}

// flink120Rewrite reads every key group of one stream and writes the entries back with Writer
// under the same header: the same entries must come out, and an uncompressed stream must be
// Flink's bytes exactly.
func flink120Rewrite(t *testing.T, name string, data []byte, h *Header, kh *metadata.KeyGroupsHandle, maxPar int) int {
	t.Helper()
	var entries []Entry
	if err := scanBytes(data, name, h, kh, maxPar, func(e *Entry) error {
		c := *e
		c.Key, c.Value = bytes.Clone(e.Key), bytes.Clone(e.Value)
		entries = append(entries, c)
		return nil
	}); err != nil {
		t.Errorf("%s: %v", name, err)
		return 0
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	out := *kh
	out.Offsets = make([]int64, len(kh.Offsets))
	for i := 0; i < len(entries); {
		j := i
		for j < len(entries) && entries[j].KeyGroup == entries[i].KeyGroup {
			j++
		}
		off, err := w.WriteKeyGroup(entries[i:j])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out.Offsets[entries[i].KeyGroup-int(kh.Range.Start)] = off
		i = j
	}
	var got, want []string
	if err := scanBytes(buf.Bytes(), "rewritten", h, &out, maxPar, func(e *Entry) error {
		got = append(got, entryKey(*e))
		return nil
	}); err != nil {
		t.Errorf("%s: re-reading the rewrite: %v", name, err)
		return len(entries)
	}
	for _, e := range entries {
		want = append(want, entryKey(e))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: %d entries after rewrite, want %d (or order/content differs)", name, len(got), len(want))
	}
	if !h.Compressed && !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("%s: uncompressed rewrite differs from Flink 1.20's bytes (%d vs %d bytes)", name, buf.Len(), len(data))
	}
	return len(entries)
}

package migrate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// keyedBytes is every keyed-state file of the savepoint at dir with its offsets, by operator
// and subtask (the files' random names aside).
func keyedBytes(t *testing.T, dir string) [][]byte {
	t.Helper()
	sp := open(t, dir)
	var out [][]byte
	for _, op := range sp.Metadata.Operators {
		for _, st := range op.Subtasks {
			kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
			if !ok {
				continue
			}
			fh, ok := kh.Delegate.(*metadata.RelativeFileHandle)
			if !ok {
				t.Fatalf("operator %s subtask %d: keyed state not in a relative file", Label(op), st.Index)
			}
			b, err := os.ReadFile(filepath.Join(dir, fh.Path))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, []byte(Label(op)), fmt.Append(nil, kh.Offsets), b)
		}
	}
	return out
}

// TestLoadDirectSameBytes: a dump in key-group order is written straight into the output files
// (no restart), data out of order is read again with spilling (one restart each), and either
// way the keyed-state files and their offsets are byte for byte those of a load that spills
// from the start, for every fixture Flink wrote.
func TestLoadDirectSameBytes(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "savepoints", "*", "_metadata"))
	if len(dirs) == 0 {
		t.Skip("no savepoint fixtures")
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, md := range dirs {
		src := filepath.Dir(md)
		name := filepath.Base(src)
		t.Run(name, func(t *testing.T) {
			lines := dumpKeyed(t, src)
			shuffled := slices.Clone(lines)
			rnd.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			for _, tc := range []struct {
				what     string
				lines    []string
				restarts int64
			}{{"dump order", lines, 0}, {"shuffled", shuffled, 1}} {
				if tc.restarts == 1 && slices.Equal(shuffled, lines) {
					continue // too few lines to shuffle
				}
				data := filepath.Join(t.TempDir(), "data.jsonl")
				if err := os.WriteFile(data, []byte(strings.Join(tc.lines, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				r0 := directRestarts.Load()
				direct, _ := run(t, src, Options{}, &Load{Data: data})
				if got := directRestarts.Load() - r0; got != tc.restarts && len(lines) > 0 {
					t.Errorf("%s: %d restarts, want %d", tc.what, got, tc.restarts)
				}
				testNoDirectLoad.Store(true)
				spilled, _ := run(t, src, Options{}, &Load{Data: data})
				testNoDirectLoad.Store(false)
				if a, b := keyedBytes(t, direct), keyedBytes(t, spilled); !slices.EqualFunc(a, b, bytes.Equal) {
					t.Fatalf("%s: the keyed state written directly differs from the spilled load's", tc.what)
				}
			}
		})
	}
}

// TestWalkEntries: walkEntries gives back each entry of a run as put laid it out, and refuses
// a run the entries do not tile, naming the byte where it goes wrong.
func TestWalkEntries(t *testing.T) {
	entry := func(key, value string) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(key)))
		b = append(b, key...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(value)))
		return append(b, value...)
	}
	run := slices.Concat(entry("\x00k1", "v1"), entry("\x00key2", ""), entry("\x00k", "value3"))
	var got [][]byte
	if err := walkEntries(run, func(e []byte) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	want := [][]byte{entry("\x00k1", "v1"), entry("\x00key2", ""), entry("\x00k", "value3")}
	if !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("entries %q, want %q", got, want)
	}
	for _, tc := range []struct {
		run  []byte
		want string
	}{
		{run[:len(run)-1], "value of the entry at byte 26 overruns the run"},
		{run[:len(run)-8], "key at byte 26 overruns the run"},
		{run[:len(run)-15], "truncated entry at byte 26"},
		{slices.Concat(run, []byte{0xff, 0xff, 0xff, 0xff, 0}), "key at byte 42 overruns the run"},
	} {
		err := walkEntries(tc.run, func([]byte) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run of %d bytes: got %v, want %q", len(tc.run), err, tc.want)
		}
	}
}

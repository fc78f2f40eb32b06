package opstate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

type fixture struct {
	name   string
	data   []byte
	handle *metadata.OperatorStreamHandle
}

// operatorFixtures loads every managed operator-state stream of the fixtures.
func operatorFixtures(t *testing.T) []fixture { return operatorFixturesTB(t) }

func operatorFixturesTB(t testing.TB) []fixture {
	t.Helper()
	dirs, _ := filepath.Glob("../../testdata/savepoints/*/_metadata")
	var out []fixture
	for _, m := range dirs {
		sp, err := savepoint.Open(filepath.Dir(m))
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range sp.Metadata.Operators {
			for _, st := range op.Subtasks {
				oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle)
				if !ok || oh.Delegate == nil {
					continue
				}
				s, err := sp.OpenStream(oh.Delegate)
				if err != nil {
					t.Fatal(err)
				}
				data, err := io.ReadAll(io.NewSectionReader(s, 0, s.Size()))
				s.Close()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, fixture{name: filepath.Base(filepath.Dir(m)) + "/" + s.Name, data: data, handle: oh})
			}
		}
		sp.Close()
	}
	if len(out) == 0 {
		t.Skip("no operator-state fixtures in testdata/savepoints (made by testdata/oracle/run.sh savepoints)")
	}
	return out
}

func readAll(data []byte, f fixture) (els []Element, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	s, err := Open(bytes.NewReader(data), int64(len(data)), f.name, f.handle)
	if err != nil {
		return nil, err
	}
	err = s.Read(func(e Element) error {
		els = append(els, e)
		return nil
	})
	return els, err
}

// TestReadsEveryOffset: every offset of every state in _metadata yields one element (list and
// union), or a map (broadcast), and every header state named by the handle has a meta info.
func TestReadsEveryOffset(t *testing.T) {
	for _, f := range operatorFixtures(t) {
		els, err := readAll(f.data, f)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		want := 0
		for _, st := range f.handle.States {
			if st.Mode != metadata.ModeBroadcast {
				want += len(st.Offsets)
			}
		}
		got := 0
		for _, e := range els {
			if e.Mode != "broadcast" {
				got++
			}
			if e.Raw == nil && e.Mode != "broadcast" {
				t.Errorf("%s: element without raw bytes", f.name)
			}
		}
		if got != want {
			t.Errorf("%s: %d list elements, _metadata has %d offsets", f.name, got, want)
		}
	}
}

// TestCorruptOperatorState cuts and flips bytes of real streams: no panic, and every error names
// the stream and an offset inside it.
func TestCorruptOperatorState(t *testing.T) {
	for _, f := range operatorFixtures(t) {
		for cut := 0; cut < len(f.data); cut++ {
			if _, err := readAll(f.data[:cut], f); err != nil {
				check(t, f, fmt.Sprintf("cut at %d", cut), err)
			} else {
				t.Errorf("%s: cut at %d of %d read without error", f.name, cut, len(f.data))
			}
		}
		for pos := 0; pos < len(f.data); pos++ {
			d := bytes.Clone(f.data)
			d[pos] ^= 0x5A
			if _, err := readAll(d, f); err != nil {
				check(t, f, fmt.Sprintf("flip at %d", pos), err)
			}
		}
	}
}

func check(t *testing.T, f fixture, what string, err error) {
	t.Helper()
	if strings.HasPrefix(err.Error(), "panic") {
		t.Fatalf("%s %s: %v", f.name, what, err)
	}
	var fe *javaio.FormatError
	if !errors.As(err, &fe) {
		if strings.Contains(err.Error(), f.name) {
			return
		}
		t.Errorf("%s %s: %T %v names neither the stream nor an offset", f.name, what, err, err)
		return
	}
	if fe.Name != f.name || fe.Offset < 0 || fe.Offset > int64(len(f.data)) {
		t.Errorf("%s %s: error at %q offset %d: %v", f.name, what, fe.Name, fe.Offset, err)
	}
}

// FuzzOperatorState feeds mutated real streams through Open and Read: errors, never panics.
func FuzzOperatorState(f *testing.F) {
	fs := operatorFixturesTB(f)
	for _, fx := range fs {
		f.Add(fx.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fx := range fs {
			if _, err := readAll(data, fx); err != nil && strings.HasPrefix(err.Error(), "panic") {
				t.Fatal(err)
			}
		}
	})
}

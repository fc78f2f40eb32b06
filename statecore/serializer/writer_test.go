package serializer_test

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/opstate"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// headerSnapshots is one state file's header bytes and every top-level snapshot read from them
// (offsets into raw).
type headerSnapshots struct {
	name  string
	raw   []byte
	snaps []*serializer.Snapshot
}

// fixtureHeaders reads the header of every keyed-state and operator-state file of every
// canonical savepoint Flink wrote under testdata (2.3.0 and, when present, 1.20).
func fixtureHeaders(t *testing.T) []headerSnapshots {
	t.Helper()
	var dirs []string
	for _, g := range []string{"../../testdata/savepoints/*/_metadata", "../../testdata/flink-1.20/savepoints/*/_metadata"} {
		m, _ := filepath.Glob(g)
		dirs = append(dirs, m...)
	}
	var out []headerSnapshots
	for _, m := range dirs {
		dir := filepath.Dir(m)
		sp, err := savepoint.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		canonical := sp.CheckCanonical() == nil
		read := func(h metadata.StreamHandle) []byte {
			s, err := sp.OpenStream(h)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			b, err := io.ReadAll(io.NewSectionReader(s, 0, s.Size()))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		for _, op := range sp.Metadata.Operators {
			for _, st := range op.Subtasks {
				if kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle); ok && kh.Delegate != nil && canonical {
					data := read(kh.Delegate)
					name := fmt.Sprintf("%s/%s keyed subtask %d", filepath.Base(dir), op.ID, st.Index)
					h, err := keyed.ReadHeaderUpTo(bytes.NewReader(data), name, keyed.HeaderEnd(kh, int64(len(data))))
					if err != nil {
						t.Fatal(err)
					}
					hs := headerSnapshots{name: name, raw: h.Raw, snaps: []*serializer.Snapshot{h.KeySerializer}}
					for _, m := range h.States {
						for _, s := range m.Serializers {
							hs.snaps = append(hs.snaps, s.Snapshot)
						}
					}
					out = append(out, hs)
				}
				if oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle); ok && oh.Delegate != nil {
					data := read(oh.Delegate)
					name := fmt.Sprintf("%s/%s operator subtask %d", filepath.Base(dir), op.ID, st.Index)
					h, err := opstate.ReadHeader(javaio.NewReader(bytes.NewReader(data), name, 0))
					if err != nil {
						t.Fatal(err)
					}
					hs := headerSnapshots{name: name, raw: data[:h.Size]}
					for _, m := range append(append([]*keyed.StateMeta{}, h.States...), h.Broadcast...) {
						for _, s := range m.Serializers {
							hs.snaps = append(hs.snaps, s.Snapshot)
						}
					}
					out = append(out, hs)
				}
			}
		}
		sp.Close()
	}
	if len(out) == 0 {
		t.Skip("no savepoint fixtures under testdata/savepoints")
	}
	return out
}

// TestWriterRoundTripsFixtures: every serializer snapshot Flink wrote into a fixture's state
// headers, and every snapshot nested in it, re-encodes to exactly the bytes it was read from.
func TestWriterRoundTripsFixtures(t *testing.T) {
	classes := map[string]int{}
	total := 0
	for _, hs := range fixtureHeaders(t) {
		var walk func(s *serializer.Snapshot, path string)
		walk = func(s *serializer.Snapshot, path string) {
			if s == nil {
				return
			}
			total++
			classes[s.Short()]++
			got, err := serializer.EncodeVersioned(s)
			if err != nil {
				t.Errorf("%s: %s: %v", hs.name, path, err)
				return
			}
			if s.Offset < 0 || s.End > int64(len(hs.raw)) || s.Offset > s.End {
				t.Fatalf("%s: %s: offsets [%d, %d) outside the %d-byte header", hs.name, path, s.Offset, s.End, len(hs.raw))
			}
			if want := hs.raw[s.Offset:s.End]; !bytes.Equal(got, want) {
				t.Errorf("%s: %s (%s): re-encoded %d bytes differ from the %d Flink wrote\n got %x\nwant %x", hs.name, path, s.Class, len(got), len(want), got, want)
			}
			for i, n := range s.Nested {
				walk(n, fmt.Sprintf("%s/%s[%d]", path, s.Short(), i))
			}
		}
		for i, s := range hs.snaps {
			walk(s, fmt.Sprintf("serializer[%d]", i))
			// The top-level form adds the envelope version in the 4 bytes before Offset.
			var b bytes.Buffer
			if err := serializer.WriteTop(javaio.NewWriter(&b), s); err != nil {
				t.Errorf("%s: top %d: %v", hs.name, i, err)
			} else if want := hs.raw[s.Offset-4 : s.End]; !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s: top-level serializer %d differs", hs.name, i)
			}
		}
	}
	// The fixtures must exercise the layouts a schema change writes.
	for _, c := range []string{"PojoSerializerSnapshot", "TtlStateFactory$TtlSerializerSnapshot", "ListSerializerSnapshot", "MapSerializerSnapshot", "TupleSerializerSnapshot"} {
		if classes[c] == 0 {
			t.Errorf("no %s among the fixtures' %d snapshots", c, total)
		}
	}
	t.Logf("%d snapshots re-encoded byte for byte: %v", total, classes)
}

// TestWriterBuildsRowAndPojo: snapshots built (not read) write bytes their reader reads back to
// the same structure, and the writer refuses what the reader would refuse.
func TestWriterBuildsRowAndPojo(t *testing.T) {
	str, _ := serializer.BasicSnapshot("String")
	lng, _ := serializer.BasicSnapshot("Long")
	row := &serializer.Snapshot{Class: "org.apache.flink.api.java.typeutils.runtime.RowSerializer$RowSerializerSnapshot",
		Version: 3, Kind: serializer.KindComposite, OuterVersion: 4, RowKind: true, Nested: []*serializer.Snapshot{str, lng}}
	pojo := &serializer.Snapshot{Class: "org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot", Version: 2,
		Kind: serializer.KindPojo, TypeClass: "a.B", Maps: [][]serializer.OptionalEntry{nil, nil},
		PojoFields: []serializer.PojoField{{Entry: "x", Name: "x", Declaring: "a.B", Present: true, Snapshot: lng}}}
	for _, s := range []*serializer.Snapshot{row, pojo} {
		b, err := serializer.EncodeVersioned(s)
		if err != nil {
			t.Fatal(err)
		}
		r := javaio.NewReader(bytes.NewReader(b), "built", 0)
		back := serializer.ReadVersioned(r, "built")
		if r.Err() != nil || !r.AtEOF() {
			t.Fatalf("%s: read back: %v (at EOF %v)", s.Short(), r.Err(), r.AtEOF())
		}
		want := len(s.Nested)
		if s.IsPojo() {
			want = len(s.PojoFields)
		}
		if serializer.JavaType(back) != serializer.JavaType(s) || len(back.Nested) != want {
			t.Errorf("%s: read back as %s with %d nested", s.Short(), serializer.JavaType(back), len(back.Nested))
		}
		again, _ := serializer.EncodeVersioned(back)
		if !bytes.Equal(again, b) {
			t.Errorf("%s: second encoding differs", s.Short())
		}
	}
	bad := []struct {
		name string
		s    *serializer.Snapshot
	}{
		{"unknown class", &serializer.Snapshot{Class: "x.Y", Version: 1}},
		{"pojo without subclass maps", &serializer.Snapshot{Class: pojo.Class, Version: 2, Kind: serializer.KindPojo}},
		{"pojo version 1", &serializer.Snapshot{Class: pojo.Class, Version: 1, Kind: serializer.KindPojo, Maps: pojo.Maps}},
		{"row nested nil", &serializer.Snapshot{Class: row.Class, Version: 3, Kind: serializer.KindComposite, OuterVersion: 4, Nested: []*serializer.Snapshot{nil}}},
		{"simple version 1", &serializer.Snapshot{Class: str.Class, Version: 1}},
	}
	for _, c := range bad {
		if _, err := serializer.EncodeVersioned(c.s); err == nil {
			t.Errorf("%s: written without an error", c.name)
		}
	}
}

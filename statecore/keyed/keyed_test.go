package keyed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// fixture is one subtask's keyed-state stream of a real savepoint, loaded into memory.
type fixture struct {
	name    string // savepoint/file
	data    []byte
	handle  *metadata.KeyGroupsHandle
	maxPar  int
	compr   bool
	entries []Entry // copies, in file order
	header0 int64   // where the header ends (HeaderEnd)
}

// keyedFixtures loads every keyed-state stream of the canonical fixtures that satisfy want.
func keyedFixtures(t testing.TB, want func(dir string) bool) []*fixture {
	t.Helper()
	dirs, _ := filepath.Glob("../../testdata/savepoints/*/_metadata")
	var out []*fixture
	for _, m := range dirs {
		dir := filepath.Dir(m)
		if want != nil && !want(dir) {
			continue
		}
		sp, err := savepoint.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if sp.CheckCanonical() != nil {
			sp.Close()
			continue
		}
		for _, op := range sp.Metadata.Operators {
			for _, st := range op.Subtasks {
				kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
				if !ok || kh.Delegate == nil {
					continue
				}
				s, err := sp.OpenStream(kh.Delegate)
				if err != nil {
					t.Fatal(err)
				}
				data, err := io.ReadAll(io.NewSectionReader(s, 0, s.Size()))
				s.Close()
				if err != nil {
					t.Fatal(err)
				}
				f := &fixture{name: filepath.Base(dir) + "/" + filepath.Base(s.Name), data: data, handle: kh, maxPar: int(op.MaxParallelism)}
				h, err := f.header()
				if err != nil {
					t.Fatalf("%s: %v", f.name, err)
				}
				f.compr = h.Compressed
				if err := f.scan(h, func(e *Entry) error {
					c := *e
					c.Key, c.Value = bytes.Clone(e.Key), bytes.Clone(e.Value)
					f.entries = append(f.entries, c)
					return nil
				}); err != nil {
					t.Fatalf("%s: %v", f.name, err)
				}
				out = append(out, f)
			}
		}
		sp.Close()
	}
	if len(out) == 0 {
		t.Skip("no canonical keyed-state fixtures in testdata/savepoints (made by testdata/oracle/run.sh savepoints)")
	}
	return out
}

func (f *fixture) scan(h *Header, fn func(*Entry) error) error {
	return scanBytes(f.data, f.name, h, f.handle, f.maxPar, fn)
}

func scanBytes(data []byte, name string, h *Header, kh *metadata.KeyGroupsHandle, maxPar int, fn func(*Entry) error) error {
	br := &BlockReader{Name: name, Compressed: h.Compressed, NumStates: len(h.States), PrefixLen: PrefixLen(maxPar)}
	for i, off := range kh.Offsets {
		if off == 0 {
			continue
		}
		if err := br.ReadBlock(bytes.NewReader(data), int64(len(data)), off, int(kh.Range.Start)+i, fn); err != nil {
			return err
		}
	}
	return nil
}

func entryKey(e Entry) string {
	return fmt.Sprintf("%d/%d/%x/%x", e.KeyGroup, e.StateID, e.Key, e.Value)
}

// withCompression returns a copy of h whose compression flag (in Raw, after the version int,
// and in Compressed) is set to compressed, for writing h's streams both ways.
func withCompression(h *Header, compressed bool) *Header {
	hh := *h
	hh.Raw = bytes.Clone(h.Raw)
	hh.Raw[4] = 0
	if compressed {
		hh.Raw[4] = 1
	}
	hh.Compressed = compressed
	return &hh
}

// TestWriterRoundTrip rewrites every real keyed-state stream with Writer, compressed and not,
// and reads the result back: the same entries must come out, and Flink's own uncompressed
// streams must be reproduced byte for byte when entries are written in file order.
func TestWriterRoundTrip(t *testing.T) {
	for _, f := range keyedFixtures(t, nil) {
		h, err := f.header()
		if err != nil {
			t.Fatal(err)
		}
		for _, compressed := range []bool{false, true} {
			hh := withCompression(h, compressed)
			var buf bytes.Buffer
			w, err := NewWriter(&buf, hh)
			if err != nil {
				t.Fatal(err)
			}
			kh := *f.handle
			kh.Offsets = make([]int64, len(f.handle.Offsets))
			byKG := map[int][]Entry{}
			var kgs []int
			for _, e := range f.entries {
				if byKG[e.KeyGroup] == nil {
					kgs = append(kgs, e.KeyGroup)
				}
				byKG[e.KeyGroup] = append(byKG[e.KeyGroup], e)
			}
			sort.Ints(kgs)
			for _, kg := range kgs {
				off, err := w.WriteKeyGroup(byKG[kg])
				if err != nil {
					t.Fatal(err)
				}
				kh.Offsets[kg-int(kh.Range.Start)] = off
			}
			h2, err := ReadHeaderUpTo(bytes.NewReader(buf.Bytes()), "rewritten", HeaderEnd(&kh, int64(buf.Len())))
			if err != nil {
				t.Fatalf("%s: re-reading header: %v", f.name, err)
			}
			var got []string
			if err := scanBytes(buf.Bytes(), "rewritten", h2, &kh, f.maxPar, func(e *Entry) error {
				got = append(got, entryKey(*e))
				return nil
			}); err != nil {
				t.Fatalf("%s (compressed=%v): re-reading blocks: %v", f.name, compressed, err)
			}
			var want []string
			for _, e := range f.entries {
				want = append(want, entryKey(e))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s (compressed=%v): %d entries after rewrite, want %d (or order/content differs)", f.name, compressed, len(got), len(want))
			}
			if !compressed && !f.compr && !bytes.Equal(buf.Bytes(), f.data) {
				t.Errorf("%s: uncompressed rewrite differs from Flink's bytes (%d vs %d bytes)", f.name, buf.Len(), len(f.data))
			}
		}
	}
}

// TestHeaderMatchesFixture checks the header against what the expectation says the job
// registered: every keyed state name with its kind.
func TestHeaderStates(t *testing.T) {
	for _, f := range keyedFixtures(t, nil) {
		h, err := f.header()
		if err != nil {
			t.Fatal(err)
		}
		if h.Version != ProxyVersion || h.KeySerializer == nil || len(h.States) == 0 {
			t.Errorf("%s: header %+v", f.name, h)
		}
		for _, m := range h.States {
			if k := m.StateKind(); strings.HasPrefix(k, "unknown") {
				t.Errorf("%s: state %q: kind %q", f.name, m.Name, k)
			}
		}
		if first := firstOffset(f.handle); first > 0 && first != h.Size() {
			t.Errorf("%s: header ends at %d, first key group at %d", f.name, h.Size(), first)
		}
	}
}

func firstOffset(kh *metadata.KeyGroupsHandle) int64 {
	var m int64
	for _, o := range kh.Offsets {
		if o > 0 && (m == 0 || o < m) {
			m = o
		}
	}
	return m
}

// TestCorruptStreams cuts and flips bytes of real streams: reading must end in an error that
// names the stream and an offset (never a panic), or, for flips inside values, still decode.
func TestCorruptStreams(t *testing.T) {
	// One stream of each kind: plain and compressed blocks of both backends, POJO/Tuple/TTL
	// serializers, and a SQL header with Java-serialized logical types.
	pickFrom := map[string]bool{"keyed-hashmap": true, "keyed-hashmap-compressed": true,
		"keyed-rocksdb-compressed": true, "types-hashmap": true, "window-hashmap": true, "sql-group-aggregate": true}
	seen := map[string]bool{}
	var fs []*fixture
	for _, f := range keyedFixtures(t, func(dir string) bool { return pickFrom[filepath.Base(dir)] }) {
		if dir := strings.Split(f.name, "/")[0]; !seen[dir] {
			seen[dir] = true
			fs = append(fs, f)
		}
	}
	for _, f := range fs {
		try := func(data []byte) (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			h, err := ReadHeader(bytes.NewReader(data), f.name)
			if err != nil {
				return err
			}
			d := NewDecoder(h, f.name, f.maxPar)
			return scanBytes(data, f.name, h, f.handle, f.maxPar, func(e *Entry) error {
				_, err := d.Decode(e)
				return err
			})
		}
		step := max(1, len(f.data)/400)
		for cut := 0; cut < len(f.data); cut += step {
			err := try(f.data[:cut])
			if err == nil {
				// A cut after the last block still reads: nothing after it was needed.
				if int64(cut) > lastOffset(f.handle) {
					continue
				}
				t.Errorf("%s cut at %d: no error", f.name, cut)
				continue
			}
			checkFormatError(t, f.name, fmt.Sprintf("cut at %d", cut), err)
		}
		for pos := 0; pos < len(f.data); pos += step {
			data := bytes.Clone(f.data)
			data[pos] ^= 0xA5
			if err := try(data); err != nil {
				checkFormatError(t, f.name, fmt.Sprintf("flip at %d", pos), err)
			}
		}
	}
}

func lastOffset(kh *metadata.KeyGroupsHandle) int64 {
	var m int64
	for _, o := range kh.Offsets {
		m = max(m, o)
	}
	return m
}

func checkFormatError(t *testing.T, name, what string, err error) {
	t.Helper()
	if strings.HasPrefix(err.Error(), "panic") {
		t.Fatalf("%s %s: %v", name, what, err)
	}
	var fe *javaio.FormatError
	if !errors.As(err, &fe) {
		t.Errorf("%s %s: error %T %q is not a FormatError", name, what, err, err)
		return
	}
	if fe.Name != name || fe.Offset < 0 || fe.Offset > 1<<40 {
		t.Errorf("%s %s: error names %q at offset %d: %v", name, what, fe.Name, fe.Offset, err)
	}
}

// BenchmarkDecode1M decodes a keyed-state stream of 1,000,000 entries built from a real
// fixture's header and entries (re-encoded with Writer, keys kept in their own key groups).
func BenchmarkDecode1M(b *testing.B) {
	fs := keyedFixtures(b, func(dir string) bool { return filepath.Base(dir) == "keyed-hashmap" })
	f := fs[0]
	h, err := f.header()
	if err != nil {
		b.Fatal(err)
	}
	const n = 1_000_000
	byKG := map[int][]Entry{}
	var kgs []int
	for i := 0; i < n; i++ {
		e := f.entries[i%len(f.entries)]
		if byKG[e.KeyGroup] == nil {
			kgs = append(kgs, e.KeyGroup)
		}
		byKG[e.KeyGroup] = append(byKG[e.KeyGroup], e)
	}
	sort.Ints(kgs)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, h)
	if err != nil {
		b.Fatal(err)
	}
	kh := *f.handle
	kh.Offsets = make([]int64, len(f.handle.Offsets))
	for _, kg := range kgs {
		off, err := w.WriteKeyGroup(byKG[kg])
		if err != nil {
			b.Fatal(err)
		}
		kh.Offsets[kg-int(kh.Range.Start)] = off
	}
	data := buf.Bytes()
	d := NewDecoder(h, "bench", f.maxPar)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		count := 0
		if err := scanBytes(data, "bench", h, &kh, f.maxPar, func(e *Entry) error {
			if _, err := d.Decode(e); err != nil {
				return err
			}
			count++
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if count != n {
			b.Fatalf("decoded %d entries, want %d", count, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/entry")
}

// replaceClass rewrites every occurrence of a serializer-snapshot class name in a stream's header
// (with its writeUTF length) and shifts the key-group offsets by the change in length.
func replaceClass(t *testing.T, f *fixture, from, to string) ([]byte, *metadata.KeyGroupsHandle) {
	t.Helper()
	utf := func(s string) []byte { return append([]byte{byte(len(s) >> 8), byte(len(s))}, s...) }
	h, err := f.header()
	if err != nil {
		t.Fatal(err)
	}
	n := bytes.Count(h.Raw, utf(from))
	if n == 0 {
		t.Fatalf("%s: header has no %s", f.name, from)
	}
	hdr := bytes.ReplaceAll(h.Raw, utf(from), utf(to))
	delta := int64(len(hdr) - len(h.Raw))
	data := append(hdr, f.data[len(h.Raw):]...)
	kh := *f.handle
	kh.Offsets = make([]int64, len(f.handle.Offsets))
	for i, o := range f.handle.Offsets {
		if o != 0 {
			kh.Offsets[i] = o + delta
		}
	}
	return data, &kh
}

// TestUnknownSnapshotClassStops: serializer snapshots have no length, so a class the reader does
// not know ends the header read with an error naming the class and its offset, when its version
// (2 here) says it is no SimpleTypeSerializerSnapshot (TestUnknownSimpleSnapshot: version 3).
func TestUnknownSnapshotClassStops(t *testing.T) {
	f := keyedFixtures(t, func(dir string) bool { return filepath.Base(dir) == "keyed-hashmap" })[0]
	const long = "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot"
	const unknown = "com.example.serializers.MysterySerializer$MysterySerializerSnapshot"
	data, _ := replaceClass(t, f, long, unknown)
	v3 := append([]byte(unknown), 0, 0, 0, 3)
	data = bytes.ReplaceAll(data, v3, append([]byte(unknown), 0, 0, 0, 2))
	_, err := ReadHeader(bytes.NewReader(data), f.name)
	if err == nil {
		t.Fatal("header with an unknown snapshot class was read")
	}
	var fe *javaio.FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), unknown) {
		t.Fatalf("error %q does not name the class", err)
	}
	// The offset must point at the class name's length prefix.
	if fe.Offset < 0 || int(fe.Offset)+2+len(unknown) > len(data) || string(data[fe.Offset+2:int(fe.Offset)+2+len(unknown)]) != unknown {
		t.Errorf("error offset %d does not point at the class name: %v", fe.Offset, err)
	}
}

// TestUndecodableValuesAreOpaque: a serializer whose snapshot is understood but whose bytes this
// package cannot decode yields base64 of the value under the serializer's class name.
func TestUndecodableValuesAreOpaque(t *testing.T) {
	f := keyedFixtures(t, func(dir string) bool { return filepath.Base(dir) == "keyed-hashmap" })[0]
	const long = "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot"
	// A simple (parameterless) snapshot class without a value decoder here.
	const other = "org.apache.flink.api.common.typeutils.base.NullValueSerializer$NullValueSerializerSnapshot"
	data, kh := replaceClass(t, f, long, other)
	h, err := ReadHeader(bytes.NewReader(data), f.name)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(h, f.name, f.maxPar)
	counts := 0
	if err := scanBytes(data, f.name, h, kh, f.maxPar, func(e *Entry) error {
		r, err := d.Decode(e)
		if err != nil {
			return err
		}
		if _, ok := r.Key.(int32); !ok && r.Kind != "timer" {
			t.Errorf("state %s: key %#v did not decode around the opaque value", r.State, r.Key)
		}
		switch r.State {
		case "count":
			o, ok := r.Value.(serializer.Opaque)
			if !ok || o.Serializer != other || !bytes.Equal(o.Base64, e.Value) {
				t.Errorf("count of key %v: %#v, want the value's 8 bytes as opaque %s", r.Key, r.Value, other)
			}
			counts++
		case "minmax":
			// Tuple2 of two undecodable fields: the whole tuple is opaque (its second field
			// cannot be found without decoding the first).
			o, ok := r.Value.(serializer.Opaque)
			if !ok || !strings.HasSuffix(o.Serializer, "TupleSerializerSnapshot") || !bytes.Equal(o.Base64, e.Value) {
				t.Errorf("minmax of key %v: %#v, want the whole tuple opaque", r.Key, r.Value)
			}
			counts++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if counts == 0 {
		t.Fatal("no entries of state count")
	}
}

// TestStateTypesMatchExpectation: the kinds, TTL flags and Java types read from the serializer
// snapshots of every fixture's header are the ones the oracle's job declared.
func TestStateTypesMatchExpectation(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/savepoints/*.expect.json")
	if len(files) == 0 {
		t.Skip("no savepoint fixtures in testdata/savepoints")
	}
	norm := func(s string) string {
		// SQL rows: the snapshot has the field types but not the names the oracle gives them.
		if strings.HasPrefix(s, "RowData<") {
			return "RowData"
		}
		s = strings.ReplaceAll(s, " ", "")
		return strings.ReplaceAll(s, "dev.statecraft.oracle.savepoints.", "")
	}
	checked := 0
	for _, ef := range files {
		raw, err := os.ReadFile(ef)
		if err != nil {
			t.Fatal(err)
		}
		var exp struct {
			Format    string
			Operators []struct {
				UIDHash     string          `json:"uidHash"`
				KeyedStates []expectedState `json:"keyedStates"`
			}
		}
		if err := json.Unmarshal(raw, &exp); err != nil {
			t.Fatal(err)
		}
		sp, err := savepoint.Open(strings.TrimSuffix(ef, ".expect.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, eo := range exp.Operators {
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
				t.Fatal(err)
			}
			for _, s := range subs {
				checked += checkStateTypes(t, ef, s, eo.KeyedStates, norm)
			}
			closeAll()
		}
		sp.Close()
	}
	if checked == 0 {
		t.Error("no keyed state was checked")
	}
}

// TestHeaderEncode: every real header re-encodes to Flink's exact bytes, and a header whose
// states were reordered and whose compression flag flipped reads back as such.
func TestHeaderEncode(t *testing.T) {
	for _, f := range keyedFixtures(t, nil) {
		h, err := f.header()
		if err != nil {
			t.Fatal(err)
		}
		b, err := h.Encode()
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if !bytes.Equal(b, h.Raw) {
			t.Errorf("%s: re-encoded header differs from Flink's (%d vs %d bytes)", f.name, len(b), len(h.Raw))
		}
		h2 := *h
		h2.Compressed = !h.Compressed
		h2.States = append([]*StateMeta(nil), h.States...)
		for i, j := 0, len(h2.States)-1; i < j; i, j = i+1, j-1 {
			h2.States[i], h2.States[j] = h2.States[j], h2.States[i]
		}
		b, err = h2.Encode()
		if err != nil {
			t.Fatal(err)
		}
		h3, err := ReadHeaderUpTo(bytes.NewReader(b), "edited", int64(len(b)))
		if err != nil {
			t.Fatalf("%s: edited header: %v", f.name, err)
		}
		if h3.Compressed != h2.Compressed || len(h3.States) != len(h2.States) {
			t.Fatalf("%s: edited header reads back as %+v", f.name, h3)
		}
		for i := range h3.States {
			if h3.States[i].Name != h2.States[i].Name || serializer.JavaType(h3.States[i].Serializer(SerValue)) != serializer.JavaType(h2.States[i].Serializer(SerValue)) {
				t.Errorf("%s: state %d reads back as %q", f.name, i, h3.States[i].Name)
			}
		}
	}
}

// FuzzKeyedStream feeds mutated real streams through the header reader, the block reader and
// the decoder: whatever the bytes, they must return (an error or records), never panic.
func FuzzKeyedStream(f *testing.F) {
	fs := keyedFixtures(f, nil)
	for _, fx := range fs {
		f.Add(fx.data)
	}
	first := fs[0]
	f.Fuzz(func(t *testing.T, data []byte) {
		if h, err := ReadHeaderUpTo(bytes.NewReader(data), "fuzz", first.header0); err == nil && h.Size() != first.header0 && len(h.AssumedSimple) > 0 {
			t.Fatalf("header read with %q ends at %d, not at %d", h.AssumedSimple, h.Size(), first.header0)
		}
		h, err := ReadHeader(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		d := NewDecoder(h, "fuzz", first.maxPar)
		kh := *first.handle
		_ = scanBytes(data, "fuzz", h, &kh, first.maxPar, func(e *Entry) error {
			_, err := d.Decode(e)
			return err
		})
	})
}

// expectedState is a keyed state as an expectation file describes it.
type expectedState struct {
	Name, Kind, KeyType, ValueType string
	UserKeyType                    *string
	TTL                            bool
}

// checkStateTypes compares the states of one subtask's header with what the oracle's job
// declared (kind, TTL flag, key, value and user-key Java types) and returns how many it checked.
// norm brings both spellings of a type name to one form before they are compared.
func checkStateTypes(t *testing.T, ef string, s *Subtask, states []expectedState, norm func(string) string) int {
	t.Helper()
	checked := 0
	for _, es := range states {
		var sd *StateDecoder
		for _, d := range s.Decoder.States {
			if d.Meta.Name == es.Name {
				sd = d
			}
		}
		if sd == nil {
			t.Errorf("%s %s: header has no state %q", ef, s.Name, es.Name)
			continue
		}
		checked++
		vs := sd.Meta.Serializer(SerValue)
		switch sd.Kind {
		case "list":
			vs = vs.Nested[0]
		case "map":
			if got := norm(serializer.JavaType(vs.Nested[0])); es.UserKeyType == nil || got != norm(*es.UserKeyType) {
				t.Errorf("%s state %s: user key type %s, want %v", ef, es.Name, got, es.UserKeyType)
			}
			vs = vs.Nested[1]
		}
		if got := norm(serializer.JavaType(serializer.UnwrapTTL(vs))); got != norm(es.ValueType) {
			t.Errorf("%s state %s: value type %s, want %s", ef, es.Name, got, es.ValueType)
		}
		if got := norm(serializer.JavaType(s.Header.KeySerializer)); got != norm(es.KeyType) {
			t.Errorf("%s state %s: key type %s, want %s", ef, es.Name, got, es.KeyType)
		}
		if sd.Kind != es.Kind || sd.TTL != es.TTL {
			t.Errorf("%s state %s: kind %s ttl %v, want %s ttl %v", ef, es.Name, sd.Kind, sd.TTL, es.Kind, es.TTL)
		}
	}
	return checked
}

package keyed

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/serializer"
)

// TestUnknownSimpleSnapshot: a snapshot class statecraft does not know, of version 3 and with no
// composite's magic after it, may be a user's SimpleTypeSerializerSnapshot subclass (empty
// payload; the oracle's SlotWindow, TestDumpMatchesOracle/native-slot-window). Here Flink's
// LongSerializerSnapshot (simple, version 3) renamed: ReadHeader stops at it, saying an empty
// payload is possible; ReadHeaderUpTo reads the header again with the class taken as simple,
// names it in AssumedSimple, writes it back byte for byte, and its Long values read as opaque
// bytes; the same reading is refused when the header would not end where the first key group
// starts.
func TestUnknownSimpleSnapshot(t *testing.T) {
	f := keyedFixtures(t, func(dir string) bool { return filepath.Base(dir) == "keyed-hashmap" })[0]
	const long = "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot"
	const unknown = "com.example.serializers.MysterySerializer$MysterySerializerSnapshot"
	data, kh := replaceClass(t, f, long, unknown)
	var u *serializer.UnknownSnapshotError
	if _, err := ReadHeader(bytes.NewReader(data), f.name); !errors.As(err, &u) || u.Class != unknown || !u.EmptyPossible {
		t.Errorf("ReadHeader: %v, want an UnknownSnapshotError for %s, empty payload possible", err, unknown)
	}
	end := HeaderEnd(kh, int64(len(data)))
	if _, err := ReadHeaderUpTo(bytes.NewReader(data), f.name, end+1); err == nil || !strings.Contains(err.Error(), "puts its end at") {
		t.Errorf("ReadHeaderUpTo at a wrong end: %v", err)
	}
	h, err := ReadHeaderUpTo(bytes.NewReader(data), f.name, end)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.AssumedSimple) != 1 || h.AssumedSimple[0] != unknown {
		t.Errorf("AssumedSimple %q, want [%s]", h.AssumedSimple, unknown)
	}
	if b, err := h.Encode(); err != nil || !bytes.Equal(b, h.Raw) {
		t.Errorf("re-encoded header: %v, equal %v", err, bytes.Equal(b, h.Raw))
	}
	d := NewDecoder(h, f.name, f.maxPar)
	opaque := 0
	if err := scanBytes(data, f.name, h, kh, f.maxPar, func(e *Entry) error {
		r, err := d.Decode(e)
		if err != nil {
			return err
		}
		if o, ok := r.Value.(serializer.Opaque); ok && o.Serializer == unknown {
			opaque++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if opaque == 0 {
		t.Error("no value read as opaque bytes of the renamed class")
	}
}

// TestUnknownSnapshotWrongAssumption: an unknown class of version 3 whose payload is not empty
// (Flink's RowDataSerializerSnapshot, version 3, renamed: an arity and Java-serialized types
// follow) is not read as a simple snapshot, though the key serializer's header then parses (the
// arity's high bytes read as 0 states): it would end far before the first key group. The error
// names the class and the assumption.
func TestUnknownSnapshotWrongAssumption(t *testing.T) {
	f := keyedFixtures(t, func(dir string) bool { return filepath.Base(dir) == "sql-group-aggregate" })[0]
	const rowData = "org.apache.flink.table.runtime.typeutils.RowDataSerializer$RowDataSerializerSnapshot"
	const unknown = "com.example.serializers.MysteryRowSerializer$Snapshot"
	data, kh := replaceClass(t, f, rowData, unknown)
	_, err := ReadHeaderUpTo(bytes.NewReader(data), f.name, HeaderEnd(kh, int64(len(data))))
	if err == nil || !strings.Contains(err.Error(), "as SimpleTypeSerializerSnapshot subclasses") || !strings.Contains(err.Error(), unknown) {
		t.Fatalf("error %v: want one naming %s and the empty-payload reading", err, unknown)
	}
	t.Log(err)
}

// header reads the fixture's header as the package does for a key-groups stream: up to the first
// key group (ReadHeaderUpTo), so a user's simple serializer snapshot is read.
func (f *fixture) header() (*Header, error) {
	f.header0 = HeaderEnd(f.handle, int64(len(f.data)))
	return ReadHeaderUpTo(bytes.NewReader(f.data), f.name, f.header0)
}

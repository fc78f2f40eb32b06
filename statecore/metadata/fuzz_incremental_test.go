package metadata

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// The incremental handle (tag 11, legacy 5) alone, as it sits in a keyed slot of _metadata:
//
//	u8   tag (5 or 11)
//	i64  checkpoint id
//	UTF  backend id
//	i32  start key group, i32 number of key groups
//	i64  checkpointed size                          tag 11 only
//	     meta data stream handle                    (u8 tag, then its body)
//	i32  shared count, then per file: UTF local path (the SST's name), stream handle
//	i32  private count, then the same
//	UTF  state handle id                            tag 11 only

// decodeKeyedHandle decodes data as one keyed handle and returns it with the decoder's error.
func decodeKeyedHandle(data []byte) (KeyedHandle, error) {
	d := &decoder{r: javaio.NewBytesReader(data, "fuzz", 0), data: data, strs: map[string]string{}, version: MaxVersion, op: -1, sub: -1}
	h := d.keyedHandle()
	return h, d.err()
}

// encodeKeyedHandle encodes h as Encode writes it in a keyed slot.
func encodeKeyedHandle(h KeyedHandle) ([]byte, error) {
	var buf bytes.Buffer
	e := &encoder{w: javaio.NewWriter(&buf), version: MaxVersion}
	e.keyedHandle(h)
	if e.err != nil {
		return nil, e.err
	}
	return buf.Bytes(), e.w.Err()
}

// nativeHandles are the incremental handles of every native snapshot Flink wrote for the
// fixtures (savepoints of 2.3.0 and 1.20.0, the retained checkpoint chain), encoded alone.
func nativeHandles(t testing.TB) [][]byte {
	var files []string
	for _, g := range []string{"../../testdata/savepoints/native-*/_metadata", "../../testdata/flink-1.20/savepoints/native-*/_metadata",
		"../../testdata/checkpoints/*/chk-*/_metadata"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	var out [][]byte
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeBytes(data, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range m.Operators {
			for _, st := range op.Subtasks {
				if h, ok := st.ManagedKeyed.(*IncrementalHandle); ok {
					b, err := encodeKeyedHandle(h)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, b)
				}
			}
		}
	}
	return out
}

// FuzzIncrementalHandle: no input panics the incremental handle decoder or makes it allocate
// more than the input can hold; whatever it accepts re-encodes to bytes that decode the same.
// Seeds are the handles of the native fixtures Flink wrote.
func FuzzIncrementalHandle(f *testing.F) {
	for _, b := range nativeHandles(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || (data[0] != TagIncrementalKeyGroups && data[0] != TagIncrementalKeyGroupsV2) {
			data = append([]byte{TagIncrementalKeyGroupsV2}, data...)
		}
		h, err := decodeKeyedHandle(data)
		if err != nil {
			return
		}
		b, err := encodeKeyedHandle(h)
		if err != nil {
			return
		}
		h2, err := decodeKeyedHandle(b)
		if err != nil {
			t.Fatalf("re-encoded handle does not decode: %v", err)
		}
		if !reflect.DeepEqual(h, h2) {
			t.Fatal("re-encoded handle decodes differently")
		}
	})
}

// TestIncrementalHandleHostile: a real handle with one field made hostile is refused with an
// error naming the field, and the refusal allocates little whatever the field claims.
func TestIncrementalHandleHostile(t *testing.T) {
	seeds := nativeHandles(t)
	if len(seeds) == 0 {
		t.Skip("no native fixtures")
	}
	// A handle with shared files (an incremental checkpoint's).
	var real []byte
	var inc *IncrementalHandle
	for _, s := range seeds {
		h, err := decodeKeyedHandle(s)
		if err != nil {
			t.Fatal(err)
		}
		if i := h.(*IncrementalHandle); len(i.Shared) > 0 {
			real, inc = s, i
			break
		}
	}
	if inc == nil {
		t.Fatal("no native fixture handle has shared files")
	}
	// Offsets into the real bytes: tag, checkpoint id, backend id (u16 length + bytes), range.
	afterBackend := 1 + 8 + 2 + len(inc.BackendID)
	afterSize := afterBackend + 8
	if inc.TagByte == TagIncrementalKeyGroupsV2 {
		afterSize += 8
	}
	metaLen := len(mustEncodeStream(t, inc.MetaData))
	sharedCount := afterSize + metaLen
	be := binary.BigEndian
	patch := func(off int, b ...byte) []byte {
		out := bytes.Clone(real)
		copy(out[off:], b)
		return out
	}
	i32 := func(v uint32) []byte { return be.AppendUint32(nil, v) }
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"shared count 2^31-1", patch(sharedCount, i32(0x7fffffff)...), "incremental.shared.count"},
		{"shared count negative", patch(sharedCount, i32(0xffffffff)...), "incremental.shared.count"},
		{"shared count 2^28 past the end", patch(sharedCount, i32(1<<28)...), "incremental.shared"},
		{"backend id longer than the input", patch(9, 0xff, 0xff), "incremental"},
		{"meta data tag unknown", patch(afterSize, 0x7f), "tag"},
		{"cut in the shared list", real[:sharedCount+6], "incremental.shared"},
		{"cut before the state handle id", real[:len(real)-1], "incremental.stateHandleId"},
	}
	for _, c := range cases {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := decodeKeyedHandle(c.data)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("%s: allocated %d bytes for a %d-byte input", c.name, grew, len(c.data))
		}
	}
}

func mustEncodeStream(t *testing.T, h StreamHandle) []byte {
	t.Helper()
	var buf bytes.Buffer
	e := &encoder{w: javaio.NewWriter(&buf), version: MaxVersion}
	e.streamHandle(h)
	if e.err != nil || e.w.Err() != nil {
		t.Fatal(e.err, e.w.Err())
	}
	return buf.Bytes()
}

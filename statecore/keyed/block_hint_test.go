package keyed

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// TestReadBlockToSameAsReadBlock checks that cutting reads at a block's expected end changes
// nothing ReadBlock reports: the same entries and block ends for every real keyed-state
// stream, with the true ends, with ends that are too early (a block then runs past its
// hint), and with no end; and the same errors for damaged streams.
func TestReadBlockToSameAsReadBlock(t *testing.T) {
	read := func(f *fixture, data []byte, h *Header, ends func(off int64) int64) (string, error) {
		var out bytes.Buffer
		br := &BlockReader{Name: f.name, Compressed: h.Compressed, NumStates: len(h.States), PrefixLen: PrefixLen(f.maxPar)}
		for i, off := range f.handle.Offsets {
			if off == 0 {
				continue
			}
			fn := func(e *Entry) error { fmt.Fprintln(&out, entryKey(*e), e.Offset); return nil }
			var err error
			if ends == nil {
				err = br.ReadBlock(bytes.NewReader(data), int64(len(data)), off, int(f.handle.Range.Start)+i, fn)
			} else {
				err = br.ReadBlockTo(bytes.NewReader(data), int64(len(data)), off, ends(off), int(f.handle.Range.Start)+i, fn)
			}
			if err != nil {
				return out.String(), err
			}
			fmt.Fprintln(&out, "end", br.End)
		}
		return out.String(), nil
	}
	damaged := 0
	for _, f := range keyedFixtures(t, nil) {
		h, err := f.header()
		if err != nil {
			t.Fatal(err)
		}
		// The stream as Flink wrote it, one with the first key's length made huge, and one cut
		// in the middle of its last block.
		variants := map[string][]byte{"intact": f.data}
		if first := firstOffset(f.handle); first > 0 && !h.Compressed {
			bad := bytes.Clone(f.data)
			binary.BigEndian.PutUint32(bad[first+2:], 0x7FFFFFF0)
			variants["huge key length"] = bad
			variants["cut"] = f.data[:len(f.data)-3]
			damaged++
		}
		for vname, data := range variants {
			ends := BlockEnds(f.handle.Offsets, int64(len(data)))
			want, wantErr := read(f, data, h, nil)
			hints := map[string]func(int64) int64{
				"true ends":  func(off int64) int64 { return ends[off] },
				"too early":  func(off int64) int64 { return off + 1 },
				"none":       func(int64) int64 { return int64(len(data)) },
				"before off": func(off int64) int64 { return off - 1 },
			}
			for hname, hint := range hints {
				got, gotErr := read(f, data, h, hint)
				if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Errorf("%s (%s), hint %s: differs from ReadBlock\ngot  error %v\nwant error %v", f.name, vname, hname, gotErr, wantErr)
				}
			}
			if vname != "intact" && wantErr == nil {
				t.Errorf("%s (%s): damage not detected", f.name, vname)
			}
		}
	}
	if damaged == 0 {
		t.Error("no uncompressed stream to damage")
	}
}

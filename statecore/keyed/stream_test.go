package keyed

import (
	"bytes"
	"strings"
	"testing"
)

// TestStreamSameAsWriteKeyGroup writes every key group of every real keyed-state stream twice,
// compressed and not: once with WriteKeyGroup, once entry by entry with BeginKeyGroup / Add /
// EndKeyGroup. The two outputs must be the same bytes, with the same offsets, and read back to
// the fixture's entries.
func TestStreamSameAsWriteKeyGroup(t *testing.T) {
	fixtures := keyedFixtures(t, nil)
	if len(fixtures) == 0 {
		t.Fatal("no keyed-state fixtures found under testdata/savepoints")
	}
	groups, blocks := 0, 0
	for _, f := range fixtures {
		h, err := f.header()
		if err != nil {
			t.Fatal(err)
		}
		runs := keyGroupRuns(f.entries)
		for _, compressed := range []bool{false, true} {
			hh := withCompression(h, compressed)
			var want, got bytes.Buffer
			ww, err := NewWriter(&want, hh)
			if err != nil {
				t.Fatal(err)
			}
			gw, err := NewWriter(&got, hh)
			if err != nil {
				t.Fatal(err)
			}
			var wantOffs, gotOffs []int64
			for _, run := range runs {
				off, err := ww.WriteKeyGroup(run)
				if err != nil {
					t.Fatal(err)
				}
				wantOffs = append(wantOffs, off)
				// An empty key group in between writes nothing.
				if err := gw.BeginKeyGroup(-1); err != nil {
					t.Fatal(err)
				}
				if off, n, err := gw.EndKeyGroup(); err != nil || off != 0 || n != 0 {
					t.Fatalf("empty streamed key group: off %d n %d err %v, want 0 0 nil", off, n, err)
				}
				if err := gw.BeginKeyGroup(run[0].KeyGroup); err != nil {
					t.Fatal(err)
				}
				for _, e := range run {
					// Add copies: hand it a buffer that is clobbered right after.
					k, v := bytes.Clone(e.Key), bytes.Clone(e.Value)
					if err := gw.Add(e.StateID, k, v); err != nil {
						t.Fatalf("%s: %v", f.name, err)
					}
					clear(k)
					clear(v)
				}
				off, n, err := gw.EndKeyGroup()
				if err != nil {
					t.Fatal(err)
				}
				if n != len(run) {
					t.Errorf("%s key group %d: EndKeyGroup counted %d entries, want %d", f.name, run[0].KeyGroup, n, len(run))
				}
				gotOffs = append(gotOffs, off)
				blocks++
			}
			groups += len(runs)
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s (compressed=%v): streamed stream differs from WriteKeyGroup's (%d vs %d bytes)", f.name, compressed, got.Len(), want.Len())
			}
			for i := range wantOffs {
				if gotOffs[i] != wantOffs[i] {
					t.Errorf("%s (compressed=%v): key group #%d at offset %d, WriteKeyGroup put it at %d", f.name, compressed, i, gotOffs[i], wantOffs[i])
				}
			}
			// The streamed output reads back to the fixture's entries.
			kh := *f.handle
			kh.Offsets = make([]int64, len(f.handle.Offsets))
			for i, run := range runs {
				kh.Offsets[run[0].KeyGroup-int(kh.Range.Start)] = gotOffs[i]
			}
			var n int
			if err := scanBytes(got.Bytes(), "streamed", hh, &kh, f.maxPar, func(e *Entry) error {
				if n >= len(f.entries) || entryKey(*e) != entryKey(f.entries[n]) {
					t.Fatalf("%s (compressed=%v): streamed entry #%d is %s", f.name, compressed, n, entryKey(*e))
				}
				n++
				return nil
			}); err != nil {
				t.Fatalf("%s (compressed=%v): reading the streamed stream: %v", f.name, compressed, err)
			}
			if n != len(f.entries) {
				t.Errorf("%s (compressed=%v): read %d entries back, want %d", f.name, compressed, n, len(f.entries))
			}
		}
	}
	t.Logf("%d fixture streams, %d key groups streamed (both compressions)", len(fixtures), blocks)
	if groups == 0 {
		t.Fatal("no key groups compared")
	}
}

// TestStreamRefuses checks the misuse and the block a stream cannot write: a state whose
// entries come back after another state's (WriteKeyGroup would regroup them).
func TestStreamRefuses(t *testing.T) {
	tests := []struct {
		name string
		run  func(w *Writer) error
		want string
	}{
		{"state comes back", func(w *Writer) error {
			w.BeginKeyGroup(3)
			if err := w.Add(0, []byte{3, 1}, nil); err != nil {
				return err
			}
			if err := w.Add(1, []byte{3, 2}, nil); err != nil {
				return err
			}
			return w.Add(0, []byte{3, 3}, nil)
		}, "state 0 comes back after state 1"},
		{"empty key", func(w *Writer) error {
			w.BeginKeyGroup(3)
			return w.Add(0, nil, []byte{1})
		}, "empty key"},
		{"add outside", func(w *Writer) error { return w.Add(0, []byte{1}, nil) }, "outside"},
		{"end without begin", func(w *Writer) error { _, _, err := w.EndKeyGroup(); return err }, "without BeginKeyGroup"},
		{"begin twice", func(w *Writer) error { w.BeginKeyGroup(1); return w.BeginKeyGroup(2) }, "while key group 1 is open"},
		{"WriteKeyGroup inside", func(w *Writer) error {
			w.BeginKeyGroup(1)
			_, err := w.WriteKeyGroup([]Entry{{KeyGroup: 1, Key: []byte{1}}})
			return err
		}, "while streamed key group 1 is open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &Writer{w: &countingWriter{w: &bytes.Buffer{}}}
			err := tt.run(w)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestStreamLargeBlock streams a key group far larger than one Snappy chunk (64 KiB), whose
// values do and do not compress, and checks the bytes against WriteKeyGroup's: the framer must
// cut the same chunks whether it gets the block in one write or entry by entry.
func TestStreamLargeBlock(t *testing.T) {
	fixtures := keyedFixtures(t, nil)
	if len(fixtures) == 0 {
		t.Fatal("no keyed-state fixtures found under testdata/savepoints")
	}
	h, err := ReadHeader(bytes.NewReader(fixtures[0].data), fixtures[0].name)
	if err != nil {
		t.Fatal(err)
	}
	var entries []Entry
	seed := uint32(1)
	for sid := range 3 {
		for i := range 5000 {
			v := make([]byte, 40+i%50)
			for j := range v {
				if sid == 1 { // pseudo-random: stored chunks (type 01)
					seed = seed*1664525 + 1013904223
					v[j] = byte(seed >> 24)
				} else {
					v[j] = byte(i)
				}
			}
			entries = append(entries, Entry{KeyGroup: 7, StateID: sid % len(h.States), Key: []byte{7, byte(i >> 8), byte(i)}, Value: v})
		}
	}
	if len(h.States) < 3 {
		entries = entries[:5000*len(h.States)]
	}
	for _, compressed := range []bool{false, true} {
		hh := withCompression(h, compressed)
		var want, got bytes.Buffer
		ww, err := NewWriter(&want, hh)
		if err != nil {
			t.Fatal(err)
		}
		gw, err := NewWriter(&got, hh)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ww.WriteKeyGroup(entries); err != nil {
			t.Fatal(err)
		}
		if err := gw.BeginKeyGroup(7); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if err := gw.Add(e.StateID, e.Key, e.Value); err != nil {
				t.Fatal(err)
			}
		}
		if _, n, err := gw.EndKeyGroup(); err != nil || n != len(entries) {
			t.Fatalf("EndKeyGroup: %d entries, %v", n, err)
		}
		if want.Len() < 256<<10 {
			t.Fatalf("block of %d bytes: want several Snappy chunks", want.Len())
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("compressed=%v: streamed block differs from WriteKeyGroup's (%d vs %d bytes)", compressed, got.Len(), want.Len())
		}
	}
}

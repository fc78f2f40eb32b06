package keyed

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestBlockBuilderSameAsWriteKeyGroup writes key groups twice, compressed and not: with
// WriteKeyGroup, and through a BlockBuilder (one reused builder; entries by AddPrefixed and runs
// of them by AddRun in turn). The bytes and offsets must be the same: for every key group of every real keyed-state stream, and for
// made-up blocks whose states come back after another (regrouped) or whose keys carry 2-byte
// prefixes.
func TestBlockBuilderSameAsWriteKeyGroup(t *testing.T) {
	fixtures := keyedFixtures(t, nil)
	if len(fixtures) == 0 {
		t.Fatal("no keyed-state fixtures found under testdata/savepoints")
	}
	type blocks struct {
		name   string
		h      *Header
		prefix int
		runs   [][]Entry
	}
	var cases []blocks
	for _, f := range fixtures {
		h, err := f.header()
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, blocks{name: f.name, h: h, prefix: PrefixLen(f.maxPar), runs: keyGroupRuns(f.entries)})
	}
	// Made-up blocks on the first fixture's header: states in and out of runs.
	h := cases[0].h
	e := func(kg, sid int, prefix int, rest, value string) Entry {
		key := []byte{byte(kg)}
		if prefix == 2 {
			key = []byte{byte(kg >> 8), byte(kg)}
		}
		return Entry{KeyGroup: kg, StateID: sid, Key: append(key, rest...), Value: []byte(value)}
	}
	cases = append(cases,
		blocks{"state comes back", h, 1, [][]Entry{{e(3, 0, 1, "a", "1"), e(3, 1, 1, "b", "2"), e(3, 0, 1, "c", "3"), e(3, 1, 1, "d", "")}}},
		blocks{"one entry", h, 1, [][]Entry{{e(0, 1, 1, "", "x")}}},
		blocks{"2-byte prefixes", h, 2, [][]Entry{{e(300, 0, 2, "k", "v"), e(300, 0, 2, "kk", "vv")}, {e(301, 1, 2, "z", "w"), e(301, 0, 2, "y", "u"), e(301, 1, 2, "x", "t")}}},
	)
	for _, c := range cases {
		for _, compressed := range []bool{false, true} {
			hh := withCompression(c.h, compressed)
			var want, got bytes.Buffer
			ww, err := NewWriter(&want, hh)
			if err != nil {
				t.Fatal(err)
			}
			gw, err := NewWriter(&got, hh)
			if err != nil {
				t.Fatal(err)
			}
			var b BlockBuilder
			if _, err := gw.WriteBlock(&b); err == nil {
				t.Fatalf("%s: WriteBlock of an empty builder accepted", c.name)
			}
			for _, run := range c.runs {
				wantOff, err := ww.WriteKeyGroup(run)
				if err != nil {
					t.Fatal(err)
				}
				b.Reset()
				for j := 0; j < len(run); {
					// AddPrefixed and AddRun copy: hand them buffers that are clobbered right
					// after. Entries go one by one through AddPrefixed, or in runs of up to 3
					// of one state through AddRun, as a block holds them.
					e := run[j]
					if j%3 == 0 {
						rest, v := bytes.Clone(e.Key[c.prefix:]), bytes.Clone(e.Value)
						b.AddPrefixed(e.StateID, e.KeyGroup, c.prefix, rest, v)
						clear(rest)
						clear(v)
						j++
						continue
					}
					var entries []byte
					last, n := 0, 0
					for ; n < 3 && j < len(run) && run[j].StateID == e.StateID; j, n = j+1, n+1 {
						last = len(entries) + 4
						entries = binary.BigEndian.AppendUint32(entries, uint32(len(run[j].Key)))
						entries = append(entries, run[j].Key...)
						entries = binary.BigEndian.AppendUint32(entries, uint32(len(run[j].Value)))
						entries = append(entries, run[j].Value...)
					}
					b.AddRun(e.StateID, entries, last, n)
					clear(entries)
				}
				if b.Len() != len(run) {
					t.Errorf("%s: Len %d, want %d", c.name, b.Len(), len(run))
				}
				gotOff, err := gw.WriteBlock(&b)
				if err != nil {
					t.Fatal(err)
				}
				if gotOff != wantOff {
					t.Errorf("%s key group %d: offset %d, want %d", c.name, run[0].KeyGroup, gotOff, wantOff)
				}
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s (compressed %v): BlockBuilder wrote %d bytes, WriteKeyGroup %d, not the same", c.name, compressed, got.Len(), want.Len())
			}
		}
	}
}

// keyGroupRuns splits a fixture's entries (in file order) into its key groups' blocks.
func keyGroupRuns(entries []Entry) [][]Entry {
	var runs [][]Entry
	for i, e := range entries {
		if i == 0 || e.KeyGroup != entries[i-1].KeyGroup {
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], e)
	}
	return runs
}

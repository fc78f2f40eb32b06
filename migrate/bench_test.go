package migrate

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/statecraft/statecraft/internal/safeio"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// growSavepoint writes into dir a copy of the keyed-hashmap fixture with n Integer keys instead
// of 12: the Flink-written keyed-state header is kept, and every state's (and timer queue's)
// first entry is replicated under each new key, in the key group Flink computes for it. Only
// the key bytes are new; every value, namespace and map key is bytes Flink wrote. It is not a
// Flink-made savepoint (no oracle job makes a large one), but its layout is the one the
// fixtures have.
func growSavepoint(tb testing.TB, dir string, n int) int64 {
	tb.Helper()
	sp := open(tb, fixture(tb, "keyed-hashmap"))
	m, err := decodeAgain(sp)
	if err != nil {
		tb.Fatal(err)
	}
	op, err := mustSel(tb, "uid:int-keyed").find(m)
	if err != nil {
		tb.Fatal(err)
	}
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		tb.Fatal(err)
	}
	defer closeAll()
	header := subs[0].Header
	// One sample entry per state id, from any subtask with the same header.
	samples := map[int]keyed.Entry{}
	for _, st := range subs {
		if !bytes.Equal(st.Header.Raw, header.Raw) {
			tb.Fatal("subtask headers differ")
		}
		st.Entries(func(e *keyed.Entry) error {
			if _, ok := samples[e.StateID]; !ok {
				samples[e.StateID] = keyed.Entry{StateID: e.StateID, Key: bytes.Clone(e.Key), Value: bytes.Clone(e.Value)}
			}
			return nil
		})
	}
	maxP := op.MaxParallelism
	kgOf := make([]int16, n)
	for k := range kgOf {
		kgOf[k] = int16(keygroup.ForHash(int32(k), maxP))
	}
	var total int64
	for i := range op.Subtasks {
		st := op.Subtasks[i]
		kh := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
		name := newStateFileName()
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		w, err := keyed.NewWriter(bw, header)
		if err != nil {
			tb.Fatal(err)
		}
		offsets := make([]int64, kh.Range.Num)
		var group []keyed.Entry
		for kg := kh.Range.Start; kg <= kh.Range.End(); kg++ {
			group = group[:0]
			for k, g := range kgOf {
				if int32(g) != kg {
					continue
				}
				for sid := 0; sid < len(header.States); sid++ {
					s, ok := samples[sid]
					if !ok {
						continue
					}
					// key := prefix [timestamp] K(4 bytes) rest
					at := 1
					if header.States[sid].Type == keyed.PriorityQueue {
						at += 8
					}
					key := append([]byte{byte(kg)}, s.Key[1:at]...)
					key = binary.BigEndian.AppendUint32(key, uint32(k))
					key = append(key, s.Key[at+4:]...)
					group = append(group, keyed.Entry{KeyGroup: int(kg), StateID: sid, Key: key, Value: s.Value})
				}
			}
			if len(group) > 0 {
				if offsets[kg-kh.Range.Start], err = w.WriteKeyGroup(group); err != nil {
					tb.Fatal(err)
				}
			}
		}
		bw.Flush()
		f.Close()
		total += w.Offset()
		st.ManagedKeyed = &metadata.KeyGroupsHandle{TagByte: metadata.TagSavepointKeyGroups, Range: kh.Range, Offsets: offsets,
			Delegate: &metadata.RelativeFileHandle{Path: name, Size: w.Offset()}}
	}
	var buf bytes.Buffer
	if err := metadata.Encode(&buf, m); err != nil {
		tb.Fatal(err)
	}
	if err := safeio.WriteFile(filepath.Join(dir, savepoint.MetadataFileName), buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return total
}

// TestGrowSavepoint checks the generator (every key readable, in its key group) and, with
// STATECRAFT_BENCH_OUT=DIR [STATECRAFT_BENCH_KEYS=N], writes a large savepoint for bench/migrate.sh.
func TestGrowSavepoint(t *testing.T) {
	dir, n := os.Getenv("STATECRAFT_BENCH_OUT"), 2000
	if dir == "" {
		dir = t.TempDir()
	} else if v, err := strconv.Atoi(os.Getenv("STATECRAFT_BENCH_KEYS")); err == nil {
		n = v
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	size := growSavepoint(t, dir, n)
	sp := open(t, dir)
	if os.Getenv("STATECRAFT_BENCH_OUT") != "" {
		fmt.Printf("wrote %s: %d keys, %d bytes of keyed state\n", dir, n, size)
		return
	}
	op, _ := mustSel(t, "uid:int-keyed").find(sp.Metadata)
	recs := records(t, sp, op) // checks every key's key group
	count := 0
	for _, c := range recs {
		count += c
	}
	if count != n*8 {
		t.Errorf("%d records, want %d (8 states and timer queues per key)", count, n*8)
	}
}

// BenchmarkRescale measures the rescale core (verification off) on 100,000 keys (800,000
// entries): the direct path (128 -> 256, one max parallelism a multiple of the other) and the
// spill path (128 -> 200), in memory and with 4 MiB chunks spilled to files.
func BenchmarkRescale(b *testing.B) {
	cases := []struct {
		name   string
		maxP   int32
		budget int64
	}{
		{"direct-256", 256, 0},
		{"spill-200-in-memory", 200, 0},
		{"spill-200-4MiB", 200, 4 << 20},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			src := b.TempDir()
			size := growSavepoint(b, src, 100_000)
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				dst := filepath.Join(b.TempDir(), "out")
				if _, err := Run(src, dst, []Step{&Rescale{MaxParallelism: c.maxP, Parallelism: 3}}, Options{NoVerify: true, SpillBudget: c.budget}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

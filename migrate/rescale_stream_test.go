package migrate

import (
	"fmt"
	"os"
	"reflect"
	"testing"
)

// STATECRAFT_STREAM_ALL=1 streams, in every test of the package, every source block a key group
// takes alone (direct path) and every key group of the spill path: with STATECRAFT_ORACLE=1,
// Flink then restores streamed outputs (the fixtures' key groups are far below the thresholds).
func init() {
	if os.Getenv("STATECRAFT_STREAM_ALL") == "1" {
		streamBlockBytes = -1
		streamAllChunks = true
	}
}

// TestRescaleStreamSameBytes forces the streamed path on every source block (streamBlockBytes
// below any block's size) and checks that the output is byte for byte what the gathered direct
// path writes, with the same report (entry counts, verification), on the per-subtask and the
// split path, compressed and not. When scaling down, only new key groups fed by a single block
// are streamed (the others are gathered); those cases check that mixing the two changes nothing.
func TestRescaleStreamSameBytes(t *testing.T) {
	source := rescaleSources(t)
	cases := []struct {
		src      string
		maxP, p  int32
		streamed bool // every key group is fed by one block: some block must be streamed
	}{
		{"keyed-hashmap", 256, 3, true},
		{"keyed-hashmap", 128, 1, true}, // same max parallelism (a new parallelism): one block per key group
		{"keyed-hashmap-compressed", 256, 3, true},
		{"keyed-rocksdb", 512, 4, true},
		{"keyed-inline", 256, 1, true},
		{"types-hashmap", 256, 5, true},
		{"window-hashmap", 512, 3, true},
		{"keyed-maxpar-256", 128, 0, false}, // scale-down: mixed
		{"keyed-par3", 64, 2, false},
		{"grown", 256, 2, true}, // split path
		{"grown", 512, 8, true}, // split path, c = 4
		{"grown", 512, 2, true}, // per-subtask tasks across bands
		{"grown", 32, 2, false},
	}
	defer func(v int64) { streamBlockBytes = v }(streamBlockBytes)
	for _, c := range cases {
		src := source(c.src)
		what := fmt.Sprintf("%s -> %d/%d", c.src, c.maxP, c.p)
		steps := []Step{&Rescale{MaxParallelism: c.maxP, Parallelism: c.p}}
		streamBlockBytes = defaultStreamBlockBytes
		before := streamedBlocks.Load()
		memDst, memRep := run(t, src, Options{}, steps...)
		if n := streamedBlocks.Load() - before; n != 0 {
			t.Fatalf("%s: %d blocks streamed at the default threshold (fixtures are small)", what, n)
		}
		streamBlockBytes = -1
		before = streamedBlocks.Load()
		dst, rep := run(t, src, Options{}, steps...)
		streamed := streamedBlocks.Load() - before
		if c.streamed && streamed == 0 {
			t.Errorf("%s: no block streamed with the threshold at -1", what)
		}
		if !reflect.DeepEqual(rep.Steps, memRep.Steps) || !reflect.DeepEqual(rep.Verify, memRep.Verify) {
			t.Errorf("%s: reports differ:\nstreamed %+v\ngathered %+v", what, rep.Steps[0], memRep.Steps[0])
		}
		sameOutput(t, what, dst, memDst)
	}
}

// TestRescaleSpillStreamSameBytes checks that the spill path writes the same bytes when every
// key group is larger than a chunk's budget (budget 1 byte: each is streamed from its spill
// parts, state by state) as when everything is loaded in memory (default budget). The cases
// include several sources feeding one key group (scaling down, keyed-par3: a state comes in one
// run per source and must be regrouped as WriteKeyGroup regroups it) and timers.
func TestRescaleSpillStreamSameBytes(t *testing.T) {
	source := rescaleSources(t)
	cases := []struct {
		src     string
		maxP, p int32
	}{
		{"keyed-hashmap", 200, 3},
		{"keyed-hashmap-compressed", 200, 0},
		{"keyed-par3", 100, 2},
		{"types-hashmap", 300, 5},
		{"window-hashmap", 1000, 0},
		{"keyed-inline", 1024, 1},
		{"grown", 200, 2},
		{"grown", 100, 3},
	}
	for _, c := range cases {
		src := source(c.src)
		what := fmt.Sprintf("%s -> %d/%d", c.src, c.maxP, c.p)
		steps := []Step{&Rescale{MaxParallelism: c.maxP, Parallelism: c.p}}
		before := streamedChunks.Load()
		memDst, memRep := run(t, src, Options{}, steps...)
		if n := streamedChunks.Load() - before; n != 0 && !streamAllChunks {
			t.Fatalf("%s: %d chunks streamed with the default budget (fixtures are small)", what, n)
		}
		before = streamedChunks.Load()
		dst, rep := run(t, src, Options{SpillBudget: 1}, steps...)
		if streamedChunks.Load() == before {
			t.Errorf("%s: no chunk streamed with a 1-byte budget", what)
		}
		if !reflect.DeepEqual(rep.Steps, memRep.Steps) || !reflect.DeepEqual(rep.Verify, memRep.Verify) {
			t.Errorf("%s: reports differ:\nstreamed %+v\nloaded   %+v", what, rep.Steps[0], memRep.Steps[0])
		}
		sameOutput(t, what, dst, memDst)
	}
}

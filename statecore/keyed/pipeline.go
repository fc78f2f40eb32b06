package keyed

import (
	"errors"
	"runtime"
)

// Reading a native snapshot is two kinds of work of about the same cost: the RocksDB merge
// (block reads, checksums, decompression, the heap across tables) and whatever the caller does
// with each entry (decode and print, or re-encode). pipelined runs the first in its own
// goroutine, handing entries over in batches, so that both cores work:
//
//	produce --entries--> batch (copies in one arena) --full--> fn, entry by entry
//	                        ^                                      |
//	                        +-------------- free <-----------------+
//
// Three batches circulate, so memory is bounded (about batchBytes each, or one entry when a
// single entry is larger) whatever the snapshot's size.

const (
	batchEntries = 4096
	batchBytes   = 1 << 20
	batchCount   = 3
)

type entryBatch struct {
	entries []Entry
	arena   []byte
	ends    []int // per entry: where its key ends and where its value ends in arena
}

// add copies e into the batch. Key and Value are set by seal, once the arena no longer moves.
func (b *entryBatch) add(e *Entry) {
	b.arena = append(b.arena, e.Key...)
	b.ends = append(b.ends, len(b.arena))
	b.arena = append(b.arena, e.Value...)
	b.ends = append(b.ends, len(b.arena))
	c := *e
	c.Key, c.Value = nil, nil
	b.entries = append(b.entries, c)
}

// seal points every entry's Key and Value into the arena (capacity-limited, so an append by the
// consumer cannot overwrite the next entry).
func (b *entryBatch) seal() {
	start := 0
	for i := range b.entries {
		k, v := b.ends[2*i], b.ends[2*i+1]
		b.entries[i].Key, b.entries[i].Value = b.arena[start:k:k], b.arena[k:v:v]
		start = v
	}
}

func (b *entryBatch) reset() {
	b.entries, b.arena, b.ends = b.entries[:0], b.arena[:0], b.ends[:0]
}

// errStopped ends the producer when the consumer has stopped.
var errStopped = errors.New("keyed: pipeline stopped")

// pipelined calls fn with every entry produce yields, produce running in its own goroutine when
// more than one CPU is available. Entries passed to fn are valid until fn returns, as produce's
// are. The first error of either side is returned (the consumer's first).
func pipelined(produce func(func(*Entry) error) error, fn func(*Entry) error) error {
	if runtime.GOMAXPROCS(0) < 2 {
		return produce(fn)
	}
	full := make(chan *entryBatch, batchCount)
	free := make(chan *entryBatch, batchCount)
	for range batchCount {
		free <- &entryBatch{}
	}
	stop := make(chan struct{})
	var perr error
	go func() {
		defer close(full)
		b := <-free
		send := func() error {
			b.seal()
			select {
			case full <- b:
			case <-stop:
				return errStopped
			}
			select {
			case b = <-free:
			case <-stop:
				return errStopped
			}
			b.reset()
			return nil
		}
		perr = produce(func(e *Entry) error {
			b.add(e)
			if len(b.entries) >= batchEntries || len(b.arena) >= batchBytes {
				return send()
			}
			return nil
		})
		// What was read before an error reaches the consumer too, as without the pipeline.
		if !errors.Is(perr, errStopped) && len(b.entries) > 0 {
			b.seal()
			select {
			case full <- b:
			case <-stop:
			}
		}
	}()
	var cerr error
	for b := range full {
		if cerr != nil {
			continue // drain until the producer sees stop
		}
		for i := range b.entries {
			if err := fn(&b.entries[i]); err != nil {
				cerr = err
				close(stop)
				break
			}
		}
		if cerr == nil {
			free <- b // never blocks: at most batchCount batches exist
		}
	}
	if cerr != nil {
		return cerr
	}
	return perr // written before full was closed
}

package migrate

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
)

// Convert rewrites every operator whose keyed state is a native RocksDB snapshot (incremental
// handles) or a hashmap full checkpoint (the heap's own key-group layout) as canonical keyed
// state: one canonical file per subtask, holding the entries the merged RocksDB column families
// (or the heap's state tables) hold for that subtask's key groups, under the snapshot's own
// header (both backends' meta data is the canonical header). Flink restores the result into
// either backend. Operators already canonical are left alone.
type Convert struct{}

func (c *Convert) Describe() string { return "convert native RocksDB keyed state to canonical" }

func (c *Convert) apply(s *session) (*StepReport, error) {
	rep := &StepReport{Step: c.Describe()}
	todo := map[*metadata.OperatorState]string{}
	for _, op := range s.m.Operators {
		if nativeKeyed(op) {
			todo[op] = "native RocksDB -> canonical"
		} else if heap, err := keyed.HeapLayout(s.src, op); err != nil {
			return nil, fmt.Errorf("operator %s: %w", Label(op), err)
		} else if heap {
			todo[op] = "hashmap checkpoint -> canonical"
		}
	}
	if len(todo) == 0 {
		return nil, fmt.Errorf("no operator has native RocksDB keyed state or a hashmap checkpoint's: the savepoint is canonical already")
	}
	for _, op := range s.m.Operators {
		if todo[op] == "" {
			continue
		}
		subs, closeAll, err := keyed.OpenSubtasks(s.src, op)
		if err != nil {
			return nil, fmt.Errorf("operator %s: %w", Label(op), err)
		}
		// Subtasks are converted side by side (each reads its own files and writes its own
		// output file); their counts and sums are folded in subtask order afterwards.
		files := make([]string, len(subs))
		if s.stage != "" {
			for i := range subs {
				files[i] = newStateFileName()
				s.fresh[files[i]] = 0
			}
		}
		results := make([]converted, len(subs))
		var wg sync.WaitGroup
		slots := make(chan struct{}, runtime.GOMAXPROCS(0))
		for i, sub := range subs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				slots <- struct{}{}
				defer func() { <-slots }()
				results[i] = s.convertSubtask(sub, files[i])
			}()
		}
		wg.Wait()
		closeAll()
		counts, sums := map[string]int{}, map[string]*Sum{}
		for i, sub := range subs {
			r := results[i]
			if r.err != nil {
				return nil, fmt.Errorf("operator %s subtask %d: %w", Label(op), sub.Index, r.err)
			}
			for id, m := range sub.Header.States {
				if sums[m.Name] == nil {
					sums[m.Name] = &Sum{}
				}
				if n := r.sums[id].Count; n > 0 {
					counts[m.Name] += int(n)
				}
				sums[m.Name].Count += r.sums[id].Count
				sums[m.Name].Hash += r.sums[id].Hash
			}
			if r.handle != nil {
				s.fresh[files[i]] = r.handle.Delegate.(*metadata.RelativeFileHandle).Size
				op.Subtask(sub.Index).ManagedKeyed = r.handle
			}
		}
		if dg := s.digest[op.ID]; dg != nil {
			// The source's digest summed the native files by name and size (it cannot know their
			// entries without this read); the output must hold the entries read here.
			delete(dg.Keyed, nativeFiles)
			for n, sum := range sums {
				dg.Keyed[n] = sum
			}
		}
		ch := change(op, counts, counts)
		ch.Note = todo[op]
		rep.Operators = append(rep.Operators, ch)
	}
	dropEmptyFileMerging(s.m)
	if s.stage != "" {
		if err := setCanonicalFormat(s.m); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// dropEmptyFileMerging removes the placeholders Flink's file merging (1.20+) writes for the
// subtasks of operators without operator state: a tag-17 handle marked empty, holding no state
// and naming only the checkpoint's taskowned/ and shared/ directories. A canonical savepoint has
// no file merging, and Flink's own savepoint of the job holds nothing for such a subtask; kept,
// the placeholder would point the output at the source checkpoint's directories, and Flink
// counts it as state (OperatorSubtaskState.hasState), so it refuses to restore the output into
// a job without that operator when non-restored state is disallowed. A subtask left with no
// handle at all goes too, as in Flink's savepoint.
func dropEmptyFileMerging(m *metadata.Metadata) {
	empty := func(h metadata.OperatorHandle) bool {
		oh, ok := h.(*metadata.OperatorStreamHandle)
		return ok && oh.TagByte == metadata.TagSegmentPartitionableOpState && oh.IsEmpty && len(oh.States) == 0
	}
	for _, op := range m.Operators {
		kept := op.Subtasks[:0]
		for _, st := range op.Subtasks {
			if st != nil && !st.Finished {
				dropped := false
				if empty(st.ManagedOperator) {
					st.ManagedOperator, dropped = nil, true
				}
				if empty(st.RawOperator) {
					st.RawOperator, dropped = nil, true
				}
				if dropped && st.ManagedOperator == nil && st.RawOperator == nil && st.ManagedKeyed == nil && st.RawKeyed == nil &&
					len(st.InputChannels) == 0 && len(st.OutputChannels) == 0 {
					continue
				}
			}
			kept = append(kept, st)
		}
		op.Subtasks = kept
	}
}

// setCanonicalFormat makes the savepoint properties of m say CANONICAL where they said NATIVE: the
// keyed state is canonical now, and inspect (and Flink's savepoint_metadata) should say so. The
// properties are a Java-serialized CheckpointProperties whose SavepointFormatType enum constant
// is the one string "NATIVE" (TC_STRING 0x74, u16 length, bytes); strings in a Java stream are
// referenced by handle number, never by offset, so one may change length. A checkpoint has no
// format type and is left alone.
func setCanonicalFormat(m *metadata.Metadata) error {
	p, err := m.ParseProperties("_metadata")
	if err != nil || p == nil || p.FormatType != "NATIVE" {
		return err
	}
	native := []byte("\x74\x00\x06NATIVE")
	if bytes.Count(m.Tail, native) != 1 {
		return fmt.Errorf("savepoint properties: the format type NATIVE is not one plain string of the serialized properties; not converting")
	}
	m.Tail = bytes.Replace(m.Tail, native, []byte("\x74\x00\x09CANONICAL"), 1)
	if p, err := m.ParseProperties("_metadata"); err != nil || p.FormatType != "CANONICAL" {
		return fmt.Errorf("savepoint properties: format type not CANONICAL after the change (%v)", err)
	}
	return nil
}

// nativeKeyed reports whether any subtask of op has native RocksDB keyed state.
func nativeKeyed(op *metadata.OperatorState) bool {
	for _, st := range op.Subtasks {
		if st == nil || st.Finished {
			continue
		}
		if _, ok := st.ManagedKeyed.(*metadata.IncrementalHandle); ok {
			return true
		}
	}
	return false
}

// converted is what convertSubtask did for one subtask: the handle of the file it wrote (nil in
// a validation run) and the count and sum of its entries per state id.
type converted struct {
	handle *metadata.KeyGroupsHandle
	sums   []Sum
	err    error
}

// convertSubtask writes the subtask's entries as one canonical stream named file in the stage
// (in a real run) and returns its savepoint key-groups handle; a validation run only counts the
// entries. Key groups are streamed entry by entry (BeginKeyGroup/Add), so memory does not grow
// with a key group's size: the native merge yields each key group state by state, one run each.
func (s *session) convertSubtask(sub *keyed.Subtask, file string) (c converted) {
	rng := sub.Range()
	prefix := sub.Decoder.PrefixLen
	c.sums = make([]Sum, len(sub.Header.States))
	if s.stage == "" {
		c.err = sub.Entries(func(e *keyed.Entry) error {
			c.sums[e.StateID].Count++
			return nil
		})
		return c
	}
	c.handle, c.err = s.writeConverted(sub, file, rng, prefix, c.sums)
	return c
}

func (s *session) writeConverted(sub *keyed.Subtask, file string, rng metadata.KeyGroupRange, prefix int, sums []Sum) (*metadata.KeyGroupsHandle, error) {
	offsets := make([]int64, rng.Num)
	f, err := os.OpenFile(filepath.Join(s.stage, file), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 256<<10)
	w, err := keyed.NewWriter(bw, sub.Header)
	if err != nil {
		return nil, err
	}
	// Entries come key group by key group; each group's block is closed when the next one starts.
	cur := -1
	end := func() error {
		if cur < 0 {
			return nil
		}
		off, n, err := w.EndKeyGroup()
		if err != nil {
			return err
		}
		if n > 0 {
			offsets[cur-int(rng.Start)] = off
		}
		return nil
	}
	err = sub.Entries(func(e *keyed.Entry) error {
		if e.KeyGroup != cur {
			if err := end(); err != nil {
				return err
			}
			cur = e.KeyGroup
			if err := w.BeginKeyGroup(cur); err != nil {
				return err
			}
		}
		sums[e.StateID].add(entryHash(e.Key, prefix, e.Value))
		return w.Add(e.StateID, e.Key, e.Value)
	})
	if err == nil {
		err = end()
	}
	if err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	return &metadata.KeyGroupsHandle{TagByte: metadata.TagSavepointKeyGroups, Range: rng, Offsets: offsets,
		Delegate: &metadata.RelativeFileHandle{Path: file, Size: w.Offset()}}, nil
}

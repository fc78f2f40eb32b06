package migrate

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
)

// keyedEdit describes a rewrite of an operator's keyed state that keeps every key in its key
// group and subtask: states renamed, dropped or given a new value type.
type keyedEdit struct {
	// header returns the new state metas and, per old state id, the new id (-1: drop).
	header func(p *headerParts, name string) (metas [][]byte, ids []int, err error)
	// entry, when set, returns the new key and value bytes of an entry (old state id in
	// e.StateID; the results must not alias e), or a nil key to drop it; dec decodes the entry
	// for messages.
	entry func(h *keyed.Header, e *keyed.Entry, dec *keyed.Decoder) (key, value []byte, err error)
	// scan makes validation runs read every entry (value conversions that may fail).
	scan bool
	// bind, when set, is called with each subtask's old header right after header has seen its
	// parts (so a step can tie what header decided to the entries of that subtask).
	bind func(h *keyed.Header)
}

// editKeyed applies ed to every subtask of op, writing one new file per subtask (in a real run).
// It returns entry counts per state name before and after, and the digest of the new entries
// per state name (what verification must find).
func (s *session) editKeyed(op *metadata.OperatorState, ed keyedEdit) (before, after map[string]int, sums map[string]*Sum, err error) {
	before, after, sums = map[string]int{}, map[string]int{}, map[string]*Sum{}
	prefix := keyed.PrefixLen(int(op.MaxParallelism))
	if m, ok := s.srcMax[op]; ok {
		prefix = keyed.PrefixLen(int(m))
	}
	for _, st := range op.Subtasks {
		if st == nil || st.Finished || st.ManagedKeyed == nil {
			continue
		}
		kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
		if !ok || kh.Tag() != metadata.TagSavepointKeyGroups {
			return nil, nil, nil, fmt.Errorf("subtask %d: keyed state is not a canonical savepoint's (tag %d); take a canonical savepoint", st.Index, st.ManagedKeyed.Tag())
		}
		if kh.Delegate == nil {
			continue
		}
		nh, err := s.editSubtask(op, st, kh, prefix, ed, before, after, sums)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("subtask %d: %w", st.Index, err)
		}
		if nh != nil {
			st.ManagedKeyed = nh
		}
	}
	return before, after, sums, nil
}

func (s *session) editSubtask(op *metadata.OperatorState, st *metadata.SubtaskState, kh *metadata.KeyGroupsHandle, prefix int, ed keyedEdit,
	before, after map[string]int, sums map[string]*Sum) (*metadata.KeyGroupsHandle, error) {
	ra, size, name, c, err := s.openKeyed(kh.Delegate)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	h, err := keyed.ReadHeaderUpTo(io.NewSectionReader(ra, 0, size), name, keyed.HeaderEnd(kh, size))
	if err != nil {
		return nil, err
	}
	parts, err := splitHeader(h, name)
	if err != nil {
		return nil, err
	}
	metas, ids, err := ed.header(parts, name)
	if err != nil {
		return nil, err
	}
	if ed.bind != nil {
		ed.bind(h)
	}
	nh, err := parts.build(metas, name)
	if err != nil {
		return nil, err
	}
	for _, m := range nh.States {
		if sums[m.Name] == nil {
			sums[m.Name] = &Sum{}
		}
	}
	write := s.stage != ""
	if !write && !ed.scan {
		return nil, nil
	}
	var f *os.File
	var bw *bufio.Writer
	var w *keyed.Writer
	var file string
	if write {
		file = newStateFileName()
		if f, err = os.OpenFile(filepath.Join(s.stage, file), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
			return nil, err
		}
		defer f.Close()
		s.fresh[file] = 0
		bw = bufio.NewWriterSize(f, 256<<10)
		if w, err = keyed.NewWriter(bw, nh); err != nil {
			return nil, err
		}
	}
	dec := keyed.NewDecoder(h, name, int(op.MaxParallelism))
	br := &keyed.BlockReader{Name: name, Compressed: h.Compressed, NumStates: len(h.States), PrefixLen: prefix}
	offsets := make([]int64, len(kh.Offsets))
	var group []keyed.Entry
	for i, off := range kh.Offsets {
		if off == 0 {
			continue
		}
		kg := int(kh.Range.Start) + i
		group = group[:0]
		err := br.ReadBlock(ra, size, off, kg, func(e *keyed.Entry) error {
			before[h.States[e.StateID].Name]++
			id := ids[e.StateID]
			if id < 0 {
				return nil
			}
			key, val := e.Key, e.Value
			if ed.entry != nil {
				k, v, err := ed.entry(h, e, dec)
				if err != nil {
					return err
				}
				if k == nil {
					return nil // the edit drops the entry
				}
				key, val = k, v
			} else {
				key, val = bytes.Clone(key), bytes.Clone(val)
			}
			n := nh.States[id].Name
			after[n]++
			sums[n].add(entryHash(key, prefix, val))
			group = append(group, keyed.Entry{KeyGroup: kg, StateID: id, Key: key, Value: val})
			return nil
		})
		if err != nil {
			return nil, err
		}
		// Converted map keys may meet: two entries with one key would be one entry to Flink.
		if ed.entry != nil && len(group) > 1 {
			seen := make(map[string]bool, len(group))
			for _, g := range group {
				k := string(rune(g.StateID)) + string(g.Key)
				if seen[k] {
					return nil, fmt.Errorf("key group %d: state %q: two entries have the same key after the conversion (map keys that convert to one value)", kg, nh.States[g.StateID].Name)
				}
				seen[k] = true
			}
		}
		if write && len(group) > 0 {
			if offsets[i], err = w.WriteKeyGroup(group); err != nil {
				return nil, err
			}
		}
	}
	if !write {
		return nil, nil
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	s.fresh[file] = w.Offset()
	return &metadata.KeyGroupsHandle{TagByte: metadata.TagSavepointKeyGroups, Range: kh.Range, Offsets: offsets,
		Delegate: &metadata.RelativeFileHandle{Path: file, Size: w.Offset()}}, nil
}

// stateIndex returns the index of the state called name in p, or -1.
func (p *headerParts) stateIndex(name string) int {
	for i, n := range p.names {
		if n == name {
			return i
		}
	}
	return -1
}

// identity returns ids 0..n-1.
func identity(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

// renameMeta returns a state meta with its leading UTF name replaced.
//
//	StateMeta: | u16 len | name (modified UTF-8) | rest ... |
func renameMeta(meta []byte, name string) ([]byte, error) {
	if len(meta) < 2 {
		return nil, fmt.Errorf("state meta of %d bytes", len(meta))
	}
	n := int(meta[0])<<8 | int(meta[1])
	if 2+n > len(meta) {
		return nil, fmt.Errorf("state meta name of %d bytes overruns the meta", n)
	}
	enc := javaio.EncodeModifiedUTF8(name)
	if len(enc) > javaio.MaxUTFLen {
		return nil, fmt.Errorf("state name of %d bytes is too long", len(enc))
	}
	out := append([]byte{byte(len(enc) >> 8), byte(len(enc))}, enc...)
	return append(out, meta[2+n:]...), nil
}

// parseMeta reads one state meta's bytes back with its serializer snapshots; offsets in the
// snapshots are relative to the start of meta.
func parseMeta(meta []byte, name string) (*keyed.StateMeta, error) {
	r := javaio.NewReader(bytes.NewReader(meta), name, 0)
	m := keyed.ReadStateMeta(r, "state")
	if err := r.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

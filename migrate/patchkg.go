package migrate

import (
	"io"
	"os"
	"slices"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
)

// kgPatch is the patch records of one key group, indexed so that the key group's block streams
// through them: each entry of the block is looked up (its exact records by state and key, and
// the deletes of a map key's every entry by key prefix), its records applied in file order,
// and what is left written at once; entries the records add go at the end of their state's run
// (or, for a state the block lacks, after the block's states), as WriteKeyGroup would place them
// if appended to the entries. Nothing of the block is held but the entry being read, so a hot
// key group costs no more than its records.
//
//	block:   s0 e1 e2 e3 | s1 e4 e5 | FFFF
//	records: set e2', delete e4, set e9 (s0), set e7 (s2)
//	out:     s0 e1 e2' e3 e9 | s1 e5 | s2 e7 | FFFF
type kgPatch struct {
	ops    []patchOp
	prefix int
	kg     int32
	header *keyed.Header
	counts map[string]*patchCounts
	sum    func(state string) *Sum
	exact  map[string]*patchKey // by state id (u16) and key past its prefix
	order  []*patchKey          // in the order of their first record
	// byPrefix are the deletes of every entry of a map key: by state id, length of the key's
	// bytes (key and namespace), and those bytes, the indexes of the records.
	byPrefix map[int]map[int]map[string][]int
	lookup   []byte // scratch: a key of exact
	idx      []int  // scratch: the records of one entry
	key      []byte // scratch: an added entry's key
}

// patchKey is one entry the records name exactly.
type patchKey struct {
	sid  int
	rest []byte
	ops  []int // indexes into kgPatch.ops, in file order
	done bool  // met in the block, or added
}

func newKGPatch(ops []patchOp, prefix int, kg int32, h *keyed.Header, counts map[string]*patchCounts, sum func(string) *Sum) *kgPatch {
	p := &kgPatch{ops: ops, prefix: prefix, kg: kg, header: h, counts: counts, sum: sum, exact: map[string]*patchKey{}}
	for i, po := range ops {
		if po.prefixOnly {
			if p.byPrefix == nil {
				p.byPrefix = map[int]map[int]map[string][]int{}
			}
			bl := p.byPrefix[po.sid]
			if bl == nil {
				bl = map[int]map[string][]int{}
				p.byPrefix[po.sid] = bl
			}
			if bl[len(po.rest)] == nil {
				bl[len(po.rest)] = map[string][]int{}
			}
			bl[len(po.rest)][string(po.rest)] = append(bl[len(po.rest)][string(po.rest)], i)
			continue
		}
		k := string(p.lookupKey(po.sid, po.rest))
		pk := p.exact[k]
		if pk == nil {
			pk = &patchKey{sid: po.sid, rest: po.rest}
			p.exact[k] = pk
			p.order = append(p.order, pk)
		}
		pk.ops = append(pk.ops, i)
	}
	return p
}

func (p *kgPatch) lookupKey(sid int, rest []byte) []byte {
	p.lookup = append(append(p.lookup[:0], byte(sid>>8), byte(sid)), rest...)
	return p.lookup
}

// recordsOf returns the indexes, in file order, of the records that apply to the entry of
// state sid whose key past its prefix is rest (pk: its exact records, or nil).
func (p *kgPatch) recordsOf(sid int, rest []byte, pk *patchKey) []int {
	p.idx = p.idx[:0]
	if pk != nil {
		p.idx = append(p.idx, pk.ops...)
	}
	n := len(p.idx)
	for l, m := range p.byPrefix[sid] {
		if len(rest) >= l {
			p.idx = append(p.idx, m[string(rest[:l])]...)
		}
	}
	if len(p.idx) > n && n > 0 {
		slices.Sort(p.idx)
	}
	return p.idx
}

// apply runs records idx on one entry (key with its prefix; had: it is in the block, with value
// v), counting what they do and keeping the digest, and returns whether the entry is left and
// its value.
func (p *kgPatch) apply(sid int, key []byte, had bool, v []byte, idx []int) (bool, []byte) {
	name := p.header.States[sid].Name
	c := p.counts[name]
	has, val := had, v
	for _, i := range idx {
		po := &p.ops[i]
		if po.del {
			if has {
				c.deleted++
				has = false
			}
			continue
		}
		if has {
			c.set++
		} else {
			c.added++
		}
		has, val = true, po.value
	}
	sm := p.sum(name)
	if had {
		sm.Count--
		sm.Hash -= entryHash(key, p.prefix, v)
	}
	if has {
		sm.add(entryHash(key, p.prefix, val))
	}
	return has, val
}

// write streams the key group's block (at off, ending at end; off 0: none) through the records
// into w (nil: a dry run, which only counts), and returns the new block's offset (0: no entry
// is left).
func (p *kgPatch) write(w *keyed.Writer, br *keyed.BlockReader, ra io.ReaderAt, size, off, end int64) (int64, error) {
	if w != nil {
		if err := w.BeginKeyGroup(int(p.kg)); err != nil {
			return 0, err
		}
	}
	add := func(sid int, key, value []byte) error {
		if w == nil {
			return nil
		}
		return w.Add(sid, key, value)
	}
	// added writes the entries the records add to state sid, in the order of their first record.
	added := func(sid int) error {
		for _, pk := range p.order {
			if pk.sid != sid || pk.done {
				continue
			}
			pk.done = true
			p.key = append(appendKeyGroupPrefix(p.key[:0], p.kg, p.prefix), pk.rest...)
			if has, v := p.apply(sid, p.key, false, nil, p.recordsOf(sid, pk.rest, pk)); has {
				if err := add(sid, p.key, v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	cur := -1
	if off != 0 {
		err := br.ReadBlockTo(ra, size, off, end, int(p.kg), func(e *keyed.Entry) error {
			if e.StateID != cur {
				if cur >= 0 {
					if err := added(cur); err != nil {
						return err
					}
				}
				cur = e.StateID
			}
			rest := e.Key[p.prefix:]
			pk := p.exact[string(p.lookupKey(e.StateID, rest))]
			idx := p.recordsOf(e.StateID, rest, pk)
			if len(idx) == 0 {
				return add(e.StateID, e.Key, e.Value)
			}
			if pk != nil {
				pk.done = true
			}
			if has, v := p.apply(e.StateID, e.Key, true, e.Value, idx); has {
				return add(e.StateID, e.Key, v)
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		if cur >= 0 {
			if err := added(cur); err != nil {
				return 0, err
			}
		}
	}
	for _, pk := range p.order {
		if !pk.done {
			if err := added(pk.sid); err != nil {
				return 0, err
			}
		}
	}
	if w == nil {
		return 0, nil
	}
	off, _, err := w.EndKeyGroup()
	return off, err
}

// Patch records are spilled in the layout of a load's entries (see Load), the key past its
// key-group prefix, and the operation in the top bits of the state id:
//
//	+--------+--------------------------------+-----------+------+-----------+-------+
//	| u16 kg | u16 del<<15 | prefix<<14 | sid | u32 klen  | rest | u32 vlen  | value |
//	+--------+--------------------------------+-----------+------+-----------+-------+
const (
	spillDelete = 1 << 15
	spillPrefix = 1 << 14
	spillSID    = spillPrefix - 1
)

// appendSpill appends the record as spilled for key group kg.
func (po *patchOp) appendSpill(dst []byte, kg int32) []byte {
	sid := po.sid
	if po.del {
		sid |= spillDelete
	}
	if po.prefixOnly {
		sid |= spillPrefix
	}
	return appendSpillRecord(dst, int(kg), sid, po.rest, po.value)
}

// rangeStart is the first key group of a subtask's keyed state (-1 without one).
func rangeStart(st *metadata.SubtaskState) int32 {
	if kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle); ok {
		return kh.Range.Start
	}
	return -1
}

// patchCursor reads an operator's spilled patch records back in key-group order: partition by
// partition, each loaded whole when it fits the spill budget, else in chunks of key groups
// (loadSpill.split). A key group's records are held while it is patched: a key group whose
// records alone pass the budget is loaded all the same (a load streams such a key group; a
// patch needs its records indexed).
type patchCursor struct {
	lo      *loadOp
	sp      *loadSpill
	part    int           // next partition to open
	chunks  []*spillChunk // chunks of the open partition not loaded yet
	entries []keyed.Entry // records of the loaded chunk not taken yet, in key-group order
	ops     []patchOp
}

// take returns the records of key group kg, in file order, valid until the next take. Key
// groups must be asked for in increasing order; records of key groups skipped are dropped.
func (c *patchCursor) take(kg int32) ([]patchOp, error) {
	for {
		for len(c.entries) > 0 && c.entries[0].KeyGroup < int(kg) {
			c.entries = c.entries[1:]
		}
		if len(c.entries) > 0 {
			if c.entries[0].KeyGroup > int(kg) {
				return nil, nil
			}
			n := 1
			for n < len(c.entries) && c.entries[n].KeyGroup == int(kg) {
				n++
			}
			c.ops = c.ops[:0]
			for _, e := range c.entries[:n] {
				c.ops = append(c.ops, patchOp{sid: e.StateID & spillSID, rest: e.Key, value: e.Value,
					del: e.StateID&spillDelete != 0, prefixOnly: e.StateID&spillPrefix != 0})
			}
			c.entries = c.entries[n:]
			return c.ops, nil
		}
		if len(c.chunks) == 0 {
			if c.part >= len(c.lo.parts) {
				return nil, nil
			}
			if from, _ := kgRange(c.part, len(c.lo.parts), c.lo.maxPar); from > kg {
				return nil, nil
			}
			if err := c.open(); err != nil {
				return nil, err
			}
			continue
		}
		ch := c.chunks[0]
		c.chunks = c.chunks[1:]
		entries, err := ch.loadEntries()
		ch.remove()
		if err != nil {
			return nil, err
		}
		c.entries = entries
	}
}

// open makes the next partition's chunks the ones to load.
func (c *patchCursor) open() error {
	i := c.part
	c.part++
	p := &c.lo.parts[i]
	if p.count == 0 {
		return nil
	}
	ch, err := p.chunk()
	if err != nil {
		return err
	}
	c.chunks = []*spillChunk{ch}
	if p.size+int64(p.count)*entryOverhead > c.sp.budget {
		from, to := kgRange(i, len(c.lo.parts), c.lo.maxPar)
		if c.chunks, err = c.sp.split(c.lo, ch, from, to); err != nil {
			return err
		}
		ch.remove()
	}
	*p = loadPart{}
	return nil
}

// close removes what is left of the spill.
func (c *patchCursor) close() {
	for _, ch := range c.chunks {
		ch.remove()
	}
	for i := c.part; i < len(c.lo.parts); i++ {
		if p := &c.lo.parts[i]; p.file != "" {
			os.Remove(p.file)
		}
	}
}

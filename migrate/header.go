package migrate

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// headerParts splits a keyed-state header's bytes at its state list, so that states can be
// merged, dropped or renamed without re-encoding serializer snapshots:
//
//	+-------------------------------------------------------+-------------+------------------+
//	| i32 version | bool compressed | key serializer snapshot| i16 nStates | StateMeta x n    |
//	+-------------------------------------------------------+-------------+------------------+
//	 \______________________ prefix _______________________/               \__ metas[i] __/
type headerParts struct {
	prefix []byte
	names  []string
	metas  [][]byte // each state's StateMeta bytes, in header order
}

func splitHeader(h *keyed.Header, name string) (*headerParts, error) {
	r := javaio.NewReader(bytes.NewReader(h.Raw), name, 0)
	r.I32("keyedHeader.version")
	r.Bool("keyedHeader.compression")
	serializer.ReadTop(r, "keyedHeader.keySerializer")
	end := r.Offset()
	n := int(r.I16("keyedHeader.numStates"))
	p := &headerParts{prefix: h.Raw[:end]}
	for i := 0; i < n && r.Err() == nil; i++ {
		start := r.Offset()
		m := keyed.ReadStateMeta(r, fmt.Sprintf("keyedHeader.state[%d]", i))
		if r.Err() != nil {
			break
		}
		p.names = append(p.names, m.Name)
		p.metas = append(p.metas, h.Raw[start:r.Offset()])
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if r.Offset() != int64(len(h.Raw)) || len(p.names) != len(h.States) {
		return nil, fmt.Errorf("%s: keyed header re-read ends at byte %d of %d", name, r.Offset(), len(h.Raw))
	}
	return p, nil
}

// build assembles a header from the prefix and the given state metas and parses it back.
func (p *headerParts) build(metas [][]byte, name string) (*keyed.Header, error) {
	if len(metas) > 0x7FFF {
		return nil, fmt.Errorf("%d states do not fit a keyed header", len(metas))
	}
	var b bytes.Buffer
	b.Write(p.prefix)
	var n [2]byte
	binary.BigEndian.PutUint16(n[:], uint16(len(metas)))
	b.Write(n[:])
	for _, m := range metas {
		b.Write(m)
	}
	h, err := keyed.ReadHeaderUpTo(bytes.NewReader(b.Bytes()), name, int64(b.Len()))
	if err != nil {
		return nil, fmt.Errorf("rebuilt header: %w", err)
	}
	if int64(len(h.Raw)) != int64(b.Len()) {
		return nil, fmt.Errorf("rebuilt header: read %d of %d bytes", len(h.Raw), b.Len())
	}
	return h, nil
}

// unionHeader merges the headers of an operator's subtasks: every state in order of first
// appearance. A state that two subtasks describe differently is refused. It returns the merged
// header and, per subtask, the merged id of each of its state ids.
func unionHeader(hs []*keyed.Header, names []string) (*keyed.Header, [][]int, error) {
	if len(hs) == 0 {
		return nil, nil, fmt.Errorf("no keyed state")
	}
	same := true
	for _, h := range hs[1:] {
		same = same && bytes.Equal(h.Raw, hs[0].Raw)
	}
	ids := make([][]int, len(hs))
	if same {
		for i, h := range hs {
			ids[i] = make([]int, len(h.States))
			for j := range ids[i] {
				ids[i][j] = j
			}
		}
		return hs[0], ids, nil
	}
	var base *headerParts
	var metas [][]byte
	index := map[string]int{}
	for i, h := range hs {
		p, err := splitHeader(h, names[i])
		if err != nil {
			return nil, nil, err
		}
		if base == nil {
			base = p
		} else if !bytes.Equal(p.prefix, base.prefix) {
			return nil, nil, fmt.Errorf("%s: key serializer or compression differs from %s", names[i], names[0])
		}
		ids[i] = make([]int, len(p.names))
		for j, n := range p.names {
			k, ok := index[n]
			if !ok {
				k = len(metas)
				index[n] = k
				metas = append(metas, p.metas[j])
			} else if !bytes.Equal(metas[k], p.metas[j]) {
				return nil, nil, fmt.Errorf("%s: state %q is described differently than in another subtask", names[i], n)
			}
			ids[i][j] = k
		}
	}
	h, err := base.build(metas, names[0])
	if err != nil {
		return nil, nil, err
	}
	return h, ids, nil
}

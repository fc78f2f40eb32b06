package migrate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/serializer"
	"github.com/statecraft/statecraft/ttl"
)

// PurgeExpired drops the keyed entries whose TTL has expired at At (ms since the epoch), under
// TTL, from the states stored with TTL (a TTL wrapper in their serializer snapshot): what a job
// restored from the savepoint would never read again. A savepoint does not record the TTL
// duration (the TTL serializer's snapshot has none), so it is given.
//
// Flink's rule (TtlUtils.expired, as bridge.Expired and `plan ttl impact` apply it):
// lastAccess + ttl <= at, the sum saturating. Where the timestamps sit:
//
//	value/reducing/aggregating  [i64 lastAccess][value]             expired: the entry goes
//	map (one entry per map key) [bool isNull][i64 lastAccess][value] expired: the entry goes
//	list                        [i64 ts][elem] 0x2C [i64 ts][elem] ...
//	                            expired elements go; the entry goes when none is left
//
// An entry counts as removed (with its key and value bytes) only when it goes entirely, as
// `plan ttl impact` counts an entry expired only when every value in it is.
type PurgeExpired struct {
	Operators []Selector // default: every keyed operator
	States    []string   // default: every state stored with TTL
	TTL       ttl.TTL
	At        int64
}

// Describe says what the step does.
func (p *PurgeExpired) Describe() string {
	return fmt.Sprintf("purge entries expired at %d ms under TTL %s", p.At, p.TTL.Text())
}

func (p *PurgeExpired) apply(s *session) (*StepReport, error) {
	if p.TTL.IsNever() {
		return nil, fmt.Errorf("TTL 0 (never): nothing would expire")
	}
	rs := &Rescale{Operators: p.Operators}
	ops, err := rs.targets(s.m)
	if err != nil {
		return nil, err
	}
	rep := &StepReport{Step: p.Describe()}
	found := map[string]bool{}
	for _, op := range ops {
		ch, err := p.purgeOperator(s, op, found)
		if err != nil {
			return nil, fmt.Errorf("operator %s: %w", Label(op), err)
		}
		rep.Operators = append(rep.Operators, ch)
	}
	for _, n := range p.States {
		if !found[n] {
			return nil, fmt.Errorf("--state %q: no selected operator has a state of that name stored with TTL", n)
		}
	}
	return rep, nil
}

func (p *PurgeExpired) purgeOperator(s *session, op *metadata.OperatorState, found map[string]bool) (OperatorChange, error) {
	removed := map[string]int64{}
	var decs []*keyed.StateDecoder
	var in serializer.Input
	ed := keyedEdit{
		scan: s.opt.DryRun,
		header: func(parts *headerParts, name string) ([][]byte, []int, error) {
			return parts.metas, identity(len(parts.metas)), nil
		},
		bind: func(h *keyed.Header) {
			decs = keyed.NewDecoder(h, "", int(op.MaxParallelism)).States
			for _, sd := range decs {
				if sd.TTL && (len(p.States) == 0 || slices.Contains(p.States, sd.Meta.Name)) {
					found[sd.Meta.Name] = true
				}
			}
		},
		entry: func(h *keyed.Header, e *keyed.Entry, _ *keyed.Decoder) ([]byte, []byte, error) {
			sd := decs[e.StateID]
			if !sd.TTL || (len(p.States) > 0 && !slices.Contains(p.States, sd.Meta.Name)) {
				return bytes.Clone(e.Key), bytes.Clone(e.Value), nil
			}
			v, err := p.purgeValue(sd, e.Value, &in)
			if err != nil {
				return nil, nil, fmt.Errorf("key group %d state %q: %w", e.KeyGroup, sd.Meta.Name, err)
			}
			if v == nil {
				removed[sd.Meta.Name] += int64(len(e.Key) + len(e.Value))
				return nil, nil, nil
			}
			return bytes.Clone(e.Key), v, nil
		},
	}
	before, after, sums, err := s.editKeyed(op, ed)
	if err != nil {
		return OperatorChange{}, err
	}
	if dg := s.digest[op.ID]; dg != nil {
		dg.Keyed = sums
	}
	ch := change(op, before, after)
	ch.BytesRemoved = removed
	return ch, nil
}

// purgeValue returns the value without its expired parts, or nil when nothing of it is left.
func (p *PurgeExpired) purgeValue(sd *keyed.StateDecoder, v []byte, in *serializer.Input) ([]byte, error) {
	expired := func(ts int64) bool {
		exp := ts + p.TTL.Millis()
		if exp < ts {
			exp = math.MaxInt64
		}
		return exp <= p.At
	}
	switch sd.Kind {
	case "map":
		if len(v) < 1 {
			return nil, fmt.Errorf("empty map value")
		}
		if v[0] != 0 {
			return bytes.Clone(v), nil // a null map value carries no timestamp
		}
		if len(v) < 9 {
			return nil, fmt.Errorf("TTL map value of %d bytes: want the null flag and an 8-byte timestamp", len(v))
		}
		if expired(int64(binary.BigEndian.Uint64(v[1:]))) {
			return nil, nil
		}
		return bytes.Clone(v), nil
	case "list":
		var out []byte
		in.Reset(v)
		for in.Remaining() > 0 {
			start := in.Pos
			ts := in.I64("ttl timestamp")
			sd.Value.Decode(in)
			if err := in.Err(); err != nil {
				return nil, err
			}
			if !expired(ts) {
				if len(out) > 0 {
					out = append(out, ',')
				}
				out = append(out, v[start:in.Pos]...)
			}
			if in.Remaining() > 0 {
				if c := in.U8("list delimiter"); c != ',' {
					return nil, fmt.Errorf("list delimiter 0x%02x at byte %d, want 0x2C", c, in.Pos-1)
				}
			}
		}
		return out, nil
	default:
		if len(v) < 8 {
			return nil, fmt.Errorf("TTL value of %d bytes: want at least the 8-byte timestamp", len(v))
		}
		if expired(int64(binary.BigEndian.Uint64(v))) {
			return nil, nil
		}
		return bytes.Clone(v), nil
	}
}

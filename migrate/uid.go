package migrate

import (
	"fmt"
	"maps"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/uid"
)

// Rename is one UID change: the operator From names gets the UID To.
type Rename struct {
	From Selector
	To   string // the new UID
}

// RenameUIDs changes operator UIDs. The OperatorID becomes the one Flink derives from the new
// UID (murmur3_128 of its UTF-8 bytes), the stored UID field (metadata V5 and later) becomes the
// new UID, and the operator name is kept: it is the name the job gave the operator, which a UID
// change does not touch. Nothing else changes; no state file is rewritten.
//
// All renames of one step happen at once, so uid:a -> b and uid:b -> a swap two operators. A
// target id that another operator keeps, two renames to one target, and two renames of one
// operator are refused.
type RenameUIDs struct {
	Renames []Rename
}

// Describe implements Step.
func (r *RenameUIDs) Describe() string {
	s := "rename-uid"
	for _, x := range r.Renames {
		s += fmt.Sprintf(" %s=uid:%s", x.From, x.To)
	}
	return s
}

func (r *RenameUIDs) apply(s *session) (*StepReport, error) {
	if len(r.Renames) == 0 {
		return nil, fmt.Errorf("no renames given")
	}
	rep := &StepReport{Step: r.Describe()}
	type move struct {
		op  *metadata.OperatorState
		id  metadata.OperatorID
		uid string
	}
	var moves []move
	renamed := map[*metadata.OperatorState]bool{}
	targets := map[metadata.OperatorID]string{}
	for _, x := range r.Renames {
		if x.To == "" {
			return nil, fmt.Errorf("%s: the new UID is empty", x.From)
		}
		op, err := x.From.find(s.m)
		if err != nil {
			return nil, err
		}
		if renamed[op] {
			return nil, fmt.Errorf("operator %s is renamed twice", Label(op))
		}
		if op.UID == x.To && s.m.Version >= 5 {
			return nil, fmt.Errorf("operator %s already has the UID %q; nothing to rename", Label(op), x.To)
		}
		id := metadata.OperatorID(uid.OperatorID(x.To))
		if prev, dup := targets[id]; dup {
			return nil, fmt.Errorf("two operators would get the UID %q (%s and %s)", x.To, prev, x.From)
		}
		targets[id] = x.From.String()
		renamed[op] = true
		moves = append(moves, move{op, id, x.To})
	}
	// A target id may only be held by an operator that is itself renamed away in this step.
	for _, op := range s.m.Operators {
		if who, ok := targets[op.ID]; ok && !renamed[op] {
			return nil, fmt.Errorf("cannot rename %s: the savepoint already has an operator with that id (%s, %s)", who, Label(op), op.ID)
		}
	}
	// Apply after every lookup, so that a swap resolves against the ids before the step.
	next := Digest{}
	for id, d := range s.digest {
		next[id] = d
	}
	for _, mv := range moves {
		delete(next, mv.op.ID)
	}
	for _, mv := range moves {
		ch := OperatorChange{Operator: Label(mv.op), UIDHashBefore: mv.op.ID.String(), UIDHashAfter: mv.id.String(), UIDAfter: mv.uid,
			ParallelismBefore: mv.op.Parallelism, ParallelismAfter: mv.op.Parallelism,
			MaxParBefore: mv.op.MaxParallelism, MaxParAfter: mv.op.MaxParallelism}
		ch.EntriesBefore = s.keyedCounts(mv.op.ID)
		ch.EntriesAfter = ch.EntriesBefore
		if s.m.Version < 5 {
			ch.Note = fmt.Sprintf("metadata version %d stores no UID field; only the operator id changed", s.m.Version)
		}
		if d := s.digest[mv.op.ID]; d != nil {
			moved := *d
			moved.Label = "uid:" + mv.uid
			next[mv.id] = &moved
		}
		rep.Operators = append(rep.Operators, ch)
	}
	for _, mv := range moves {
		mv.op.ID, mv.op.UID = mv.id, mv.uid
	}
	if s.digest != nil {
		s.digest = next
	}
	return rep, nil
}

// digestCounts returns the entries of each keyed state of id that has any, as the digest holds
// them after the steps so far (nil without a digest). A state step reports these rather than
// what it scans, so that a dry run, which leaves the files as they were, reports what the run
// does: a state an earlier step dropped is not counted again.
func (s *session) digestCounts(id metadata.OperatorID) map[string]int {
	if s.digest == nil || s.digest[id] == nil {
		return nil
	}
	out := map[string]int{}
	for k, v := range s.digest[id].Keyed {
		if v.Count > 0 {
			out[k] = int(v.Count)
		}
	}
	return out
}

// dryRunCounts returns the entries per state a value-rewriting step (retype, field changes)
// reports: in a dry run, which scans the source files as they are, the digest's counts after the
// steps so far, so that a state an earlier step renamed or dropped is reported as the run reports
// it; otherwise what the step scanned.
func (s *session) dryRunCounts(id metadata.OperatorID, before, after map[string]int) (map[string]int, map[string]int) {
	if s.opt.DryRun {
		if c := s.digestCounts(id); c != nil {
			return c, maps.Clone(c)
		}
	}
	return before, after
}

// keyedCounts returns the entry count per keyed state the digest holds for id (nil without one).
func (s *session) keyedCounts(id metadata.OperatorID) map[string]int {
	if s.digest == nil || s.digest[id] == nil {
		return nil
	}
	out := map[string]int{}
	for k, v := range s.digest[id].Keyed {
		out[k] = int(v.Count)
	}
	return out
}

package main

import (
	"encoding/base64"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/sourcestate"
)

// coordinatorState is the name dump gives an operator's coordinator state. Flink names it
// nothing (it is one inline byte stream per operator in _metadata, not a registered state); the
// brackets keep it apart from any state a job can register, so --state can still select it.
const coordinatorState = "(coordinator)"

// coordinatorMode is the mode of the record: not list, union or broadcast operator state, and
// carried over as it is by create --like (migrate's loader skips it).
const coordinatorMode = "coordinator"

// coordinatorRecord is an operator's coordinator state in dump output: for a FLIP-27 source the
// enumerator's checkpoint as savepoint offsets --json shows it (decoded for Kafka and
// FileSource, serializer version and base64 otherwise); for any other coordinator its bytes.
type coordinatorRecord struct {
	State string `json:"state"`
	Mode  string `json:"mode"`
	Value any    `json:"value"`
}

// rawCoordinator is the coordinator state of an operator that is not a source.
type rawCoordinator struct {
	Bytes  int    `json:"bytes"`
	Base64 string `json:"base64"`
}

// coordinatorValue decodes op's coordinator state for dump; nil when it has none. A source's
// coordinator frame that does not hold together is an error naming the operator and offset (as
// savepoint offsets reports it).
func coordinatorValue(sp *savepoint.Savepoint, op *metadata.OperatorState) (any, error) {
	if op.Coordinator == nil {
		return nil, nil
	}
	if !sourcestate.IsSource(op) {
		d := op.Coordinator.Data
		return rawCoordinator{Bytes: len(d), Base64: base64.StdEncoding.EncodeToString(d)}, nil
	}
	src, err := sourcestate.Read(sp, op)
	if err != nil {
		return nil, err
	}
	return describeSource(src).Enumerator, nil
}

// emitCoordinator emits op's coordinator record when state selects it (empty: every state) and
// says whether it did.
func emitCoordinator(sp *savepoint.Savepoint, op *metadata.OperatorState, state string, emit func(dumpRecord) error) (bool, error) {
	if op.Coordinator == nil || state != "" && state != coordinatorState {
		return false, nil
	}
	v, err := coordinatorValue(sp, op)
	if err != nil {
		return false, err
	}
	return true, emit(dumpRecord{Coordinator: &coordinatorRecord{State: coordinatorState, Mode: coordinatorMode, Value: v}})
}

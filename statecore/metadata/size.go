package metadata

// Sizes as Flink's savepoint_metadata() SQL function reports them (SavepointMetadataTableFunction:
// OperatorState.getCheckpointedSize and getStates().size()), checked against Flink 2.3.0's own
// numbers for every handle type (handles_flink_test.go).

// CheckpointedSize is OperatorSubtaskState.getCheckpointedSize(): over the six handle
// collections, a composite (keyed) handle adds its checkpointed size and every other handle its
// state size. A finished subtask has no state.
func (s *SubtaskState) CheckpointedSize() int64 {
	return s.sum(func(h KeyedHandle) int64 { return h.CheckpointedSize() })
}

// StateSize is OperatorSubtaskState.getStateSize(): the full size of every handle (for
// incremental snapshots this includes files shared with earlier checkpoints).
func (s *SubtaskState) StateSize() int64 {
	return s.sum(func(h KeyedHandle) int64 { return h.StateSize() })
}

// sum adds up the subtask's handles, keyed handles measured by keyed.
func (s *SubtaskState) sum(keyed func(KeyedHandle) int64) int64 {
	if s == nil || s.Finished {
		return 0
	}
	var n int64
	for _, h := range []OperatorHandle{s.ManagedOperator, s.RawOperator} {
		if h != nil {
			n += h.StateSize()
		}
	}
	for _, h := range []KeyedHandle{s.ManagedKeyed, s.RawKeyed} {
		if h != nil {
			n += keyed(h)
		}
	}
	for _, h := range s.InputChannels {
		n += h.StateSize()
	}
	for _, h := range s.OutputChannels {
		n += h.StateSize()
	}
	return n
}

// CoordinatorSize is the size of the operator coordinator's state, 0 when there is none.
func (o *OperatorState) CoordinatorSize() int64 {
	if o.Coordinator == nil {
		return 0
	}
	return o.Coordinator.StateSize()
}

// latest calls f for each subtask record Flink's map would keep: one per index, a later record
// replacing an earlier one with the same index.
func (o *OperatorState) latest(f func(*SubtaskState)) {
	// Flink writes records in ascending index order; only other files need the map.
	ascending := true
	for i := 1; i < len(o.Subtasks); i++ {
		if o.Subtasks[i].Index <= o.Subtasks[i-1].Index {
			ascending = false
			break
		}
	}
	if ascending {
		for _, s := range o.Subtasks {
			f(s)
		}
		return
	}
	m := make(map[int32]*SubtaskState, len(o.Subtasks))
	for _, s := range o.Subtasks {
		m[s.Index] = s
	}
	for _, s := range m {
		f(s)
	}
}

// SubtaskStateCount is getStates().size(): the number of distinct subtask indexes with a record,
// finished markers included.
func (o *OperatorState) SubtaskStateCount() int {
	if o.FullyFinished {
		return 0
	}
	n := 0
	o.latest(func(*SubtaskState) { n++ })
	return n
}

// CheckpointedSize is OperatorState.getCheckpointedSize(): the coordinator's state plus the
// checkpointed size of subtasks 0..parallelism-1 (records for other indexes are not counted).
func (o *OperatorState) CheckpointedSize() int64 {
	return o.sum((*SubtaskState).CheckpointedSize)
}

// StateSize is OperatorState.getStateSize(), the same sum over full state sizes.
func (o *OperatorState) StateSize() int64 {
	return o.sum((*SubtaskState).StateSize)
}

func (o *OperatorState) sum(size func(*SubtaskState) int64) int64 {
	n := o.CoordinatorSize()
	if o.FullyFinished {
		return n
	}
	o.latest(func(s *SubtaskState) {
		if s.Index >= 0 && s.Index < o.Parallelism {
			n += size(s)
		}
	})
	return n
}

package savepoint

import "github.com/statecraft/statecraft/statecore/metadata"

// MetadataRow is one row of Flink's savepoint_metadata(path) SQL function
// (SavepointMetadataTableFunction), with the JSON names the expectation files use.
type MetadataRow struct {
	CheckpointID                int64   `json:"checkpointId"`                // checkpoint-id
	OperatorName                *string `json:"operatorName"`                // operator-name, NULL when not stored
	OperatorUID                 *string `json:"operatorUid"`                 // operator-uid, NULL when not stored
	OperatorUIDHash             string  `json:"operatorUidHash"`             // operator-uid-hash
	Parallelism                 int32   `json:"parallelism"`                 // operator-parallelism
	MaxParallelism              int32   `json:"maxParallelism"`              // operator-max-parallelism
	SubtaskStateCount           int     `json:"subtaskStateCount"`           // operator-subtask-state-count
	CoordinatorStateSizeInBytes int64   `json:"coordinatorStateSizeInBytes"` // operator-coordinator-state-size-in-bytes
	TotalSizeInBytes            int64   `json:"totalSizeInBytes"`            // operator-total-size-in-bytes
}

// MetadataColumns are the column names of savepoint_metadata, in order.
var MetadataColumns = []string{
	"checkpoint-id", "operator-name", "operator-uid", "operator-uid-hash",
	"operator-parallelism", "operator-max-parallelism", "operator-subtask-state-count",
	"operator-coordinator-state-size-in-bytes", "operator-total-size-in-bytes",
}

// MetadataRows returns what savepoint_metadata reports: one row per operator, in file order.
func MetadataRows(m *metadata.Metadata) []MetadataRow {
	rows := make([]MetadataRow, 0, len(m.Operators))
	for _, op := range m.Operators {
		rows = append(rows, Row(m.CheckpointID, op))
	}
	return rows
}

// Row is the savepoint_metadata row of one operator.
func Row(checkpointID int64, op *metadata.OperatorState) MetadataRow {
	return MetadataRow{
		CheckpointID:                checkpointID,
		OperatorName:                nullable(op.Name),
		OperatorUID:                 nullable(op.UID),
		OperatorUIDHash:             op.ID.String(),
		Parallelism:                 op.Parallelism,
		MaxParallelism:              op.MaxParallelism,
		SubtaskStateCount:           op.SubtaskStateCount(),
		CoordinatorStateSizeInBytes: op.CoordinatorSize(),
		TotalSizeInBytes:            op.CheckpointedSize(),
	}
}

// nullable maps the empty string, which V5+ files store for "absent", to nil.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

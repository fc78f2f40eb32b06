package bridge

// nodeWants: what savepoint check predicts for the type catalogue's cases over the exec nodes
// of plan/statetypes_nodes.go (session windows, the legacy group window aggregate, event-time
// keep-last deduplication, the UpdateFast Top-N), each a Flink 2.3.0 savepoint
// (upgrades/types-savepoints) restored by Flink 2.3.0 under a changed plan; merged into
// TestTypeCatalogueAgreesWithFlink's table.
var nodeWants = map[string]string{
	"v23-session-same":                      "",
	"v23-session-aggregate-added":           "type-incompatible", // window-aggs Row<INT, INT>, the savepoint Row<INT>
	"v23-session-gap-changed":               "",                  // same types: the stored session ends where the old gap put it (wrong rows)
	"v23-group-window-same":                 "",
	"v23-group-window-aggregate-added":      "type-incompatible",
	"v23-group-window-to-session":           "state-missing", // tumbling windows' state has no session-window-mapping: Flink fails (NPE)
	"v23-dedup-rowtime-last-same":           "",
	"v23-dedup-rowtime-last-to-first":       "", // keep first, insert-only registers other states: deduplicate-state is restored unread (state-unread), wrong rows
	"v23-dedup-rowtime-last-key-retyped":    "type-incompatible",
	"v23-dedup-rowtime-last-amount-retyped": "type-incompatible", // deduplicate-state Row<..., SMALLINT, ...>, the savepoint INT
	"v23-top-n-update-same":                 "",
	"v23-top-n-update-key-retyped":          "type-incompatible",
	"v23-top-n-update-order-reversed":       "", // ASC is not monotonic: the Retract strategy's states; data-state-with-update is restored unread
	// Flink 1.20 twins of the 2.3 bases (a 1.20 savepoint of the base's SQL, restored by 2.3.0
	// under the changed SQL compiled by 2.3.0): the same predictions.
	"v120-session-same":                 "",
	"v120-session-aggregate-added":      "type-incompatible",
	"v120-group-window-same":            "",
	"v120-group-window-aggregate-added": "type-incompatible",
	"v120-top-n-update-same":            "",
	"v120-top-n-update-key-retyped":     "type-incompatible",
	"v120-dedup-rowtime-same":           "",                  // 2.3 keeps first by rowtime in other states (outputInsertOnly): the 1.20 state restored unread, wrong rows
	"v120-dedup-rowtime-first-to-last":  "",                  // the keep-first states restored unread
	"v120-top-n-retract-same":           "type-incompatible", // 2.3 feeds the rank another column (BIGINT NOT NULL) than 1.20 did: data-state's rows differ
	"v120-top-n-retract-order-reversed": "type-incompatible", // the sorted map's comparator
	"v120-over-range-same":              "",
	"v120-over-range-sum-to-max":        "type-incompatible",
}

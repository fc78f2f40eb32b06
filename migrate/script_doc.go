package migrate

import (
	"maps"
	"slices"
)

// ScriptExample is a migration script with every step kind and every field, commented: the
// reference users get from `statecraft help scripts`. TestScriptExample parses it and checks it
// names every kind and field stepFields knows, so it cannot fall behind the parser.
const ScriptExample = `# statecraft migration script
steps:
  - rename-uid:                # one or more renames, applied together (swaps allowed)
      renames:
        - {from: "hash:5534c038c66cc9b701311c8cdd8de69b", to: counter}
        - {from: "uid:old-name", to: new-name}
  - rename-uid: {from: "uid:a", to: b}      # short form for one rename
  - rescale:
      max-parallelism: 256
      parallelism: 4           # optional: default the old one, capped at the new max
      operators: ["uid:counter"] # optional: default every keyed operator
  - retype: {operator: "uid:counter", state: count, to: Long}
  - retype: {operator: "uid:counter", state: byId, key-to: Long}  # a map's key type
  - retype: {operator: "uid:counter", state: pair, field: f0, to: Long}  # a tuple field
  # Row or POJO values: drop fields (Row: f0, f1, ... by position; POJO: by name), add
  # fields with a type and a default (null allowed; a Row field is named by the position it
  # takes), rename a POJO's class. Drops use the old names and happen first.
  - retype: {operator: "uid:evolve", state: profile, add-field: {name: f2, type: Long, default: 0}}
  - retype: {operator: "uid:evolve", state: events, drop-field: f1}
  - retype:
      operator: "uid:evolve"
      state: account
      class: dev.statecraft.oracle.savepoints.AccountV2
      drop-field: [version]                # a list, or one name, or "a, b"
      add-field:                           # a mapping, or a list of them
        - {name: tier, type: String, default: gold}
        - {name: level, type: Integer, default: null}
  - rename-state: {operator: "uid:counter", from: seen, to: seen-v2}
  - drop-state: {operator: "uid:counter", state: names}
  - drop-operator: {operator: "uid:legacy"}
  # keyed entries set or deleted by the records of a file (as migrate patch --data takes them),
  # then deleted where a predicate holds (STATE: FIELD OP LITERAL; one or a list; any may hold)
  - patch:
      data: fixes.jsonl
      delete-where: ["count: value == null", "session: ttlTimestamp < 1700000000000"]
      operators: ["uid:counter"]   # optional: what delete-where reads (default every keyed operator)
  # a KafkaSource's positions: readers' splits and enumerator state together (one value or a list each)
  - offsets:
      operator: "uid:kafka-source"
      set: ["orders:0=42", "payments=earliest"]   # TOPIC:PARTITION=OFFSET, TOPIC=earliest|latest|committed|OFFSET
      shift: "orders:1=-10"                       # TOPIC[:PARTITION]=+N|-N
      rename-topic: "clicks=mm.clicks"            # OLD=NEW, offsets carried over
      drop-topic: legacy-topic                     # its splits and the enumerator's record of it
      from-file: mm2-offsets.csv                   # offsets to set: CSV topic,partition,offset or a JSON list
  # every partition to the first offset at or after a time, asked of the cluster when the step runs
  # (kafka-config: a Kafka client properties file with TLS/SASL settings)
  - offsets: {operator: "uid:clicks-source", to-timestamp: "2024-05-01T12:00:00Z", bootstrap-servers: "kafka:9092"}
`

// StepKinds returns the step kinds a script may use, sorted.
func StepKinds() []string { return slices.Sorted(maps.Keys(stepFields)) }

// StepFields returns the fields a step kind takes and which of them are required.
func StepFields(kind string) (fields []string, required map[string]bool) {
	required = map[string]bool{}
	for _, f := range stepFields[kind] {
		if f[0] == '*' {
			f = f[1:]
			required[f] = true
		}
		fields = append(fields, f)
	}
	return fields, required
}

package migrate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/kafkatest"
	"github.com/statecraft/statecraft/internal/oracletest"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/sourcestate"
)

const kafkaFixture = "../testdata/sources/kafka-datastream"

// sqlKafkaFixture: a Flink SQL job reading Kafka through the connector's table source
// (kafka-sql-savepoint), with its compiled plan beside it.
const sqlKafkaFixture = "../testdata/sources/sql-kafka"

// sqlSourceOperator selects the one source operator of a savepoint (a SQL job's has no uid of
// ours).
func sqlSourceOperator(t *testing.T, dir string) Selector {
	t.Helper()
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var found []string
	for _, op := range sp.Metadata.Operators {
		if sourcestate.IsSource(op) {
			found = append(found, "hash:"+op.ID.String())
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: source operators %v, want one", dir, found)
	}
	sel, err := ParseSelector(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func changes(t *testing.T, args ...string) []sourcestate.OffsetChange {
	t.Helper()
	var out []sourcestate.OffsetChange
	for _, a := range args {
		kind, arg, _ := strings.Cut(a, " ")
		c, err := sourcestate.ParseOffsetChange(kind, arg)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// positions reads back a savepoint's Kafka source: reader splits as "topic:p=start" and the
// enumerator's partitions as "topic-p status start".
func positions(t *testing.T, dir string) (readers, enum []string) {
	t.Helper()
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	for _, op := range sp.Metadata.Operators {
		if !sourcestate.IsSource(op) {
			continue
		}
		src, err := sourcestate.Read(sp, op)
		if err != nil || src.Connector != sourcestate.ConnectorKafka {
			t.Fatalf("%s: %v %s %v", dir, err, src.Connector, src.EnumErr)
		}
		for _, s := range src.Splits {
			readers = append(readers, fmt.Sprintf("%s:%d=%s", s.Kafka.Topic, s.Kafka.Partition, sourcestate.StartingText(s.Kafka.StartingOffset)))
		}
		for _, p := range src.KafkaEnum.Partitions {
			enum = append(enum, fmt.Sprintf("%s %s %s", p.Split.ID(), p.Status, sourcestate.StartingText(p.Split.StartingOffset)))
		}
	}
	sort.Strings(readers)
	sort.Strings(enum)
	return readers, enum
}

func TestOffsetsStep(t *testing.T) {
	op, _ := ParseSelector("uid:kafka-source")
	tests := []struct {
		name    string
		changes []string
		readers string
		enum    string
		err     string
	}{
		{"set shift rename", []string{"shift orders:1=-2", "set payments:1=4", "set payments:0=earliest", "rename-topic orders=orders-mm"},
			"[orders-mm:0=2 orders-mm:1=1 orders-mm:2=4 payments:0=earliest payments:1=4]",
			"[orders-mm-0 assigned earliest orders-mm-1 assigned earliest orders-mm-2 assigned earliest payments-0 assigned earliest payments-1 assigned 4]", ""},
		{"drop a topic", []string{"drop-topic payments", "set orders=committed"},
			"[orders:0=committed orders:1=committed orders:2=committed]",
			"[orders-0 assigned committed orders-1 assigned committed orders-2 assigned committed]", ""},
		{"unknown topic", []string{"set nope:0=1"}, "", "", `the savepoint holds no topic "nope" (it holds orders (partitions 0,1,2), payments (partitions 0,1))`},
		{"unknown partition", []string{"shift orders:7=+1"}, "", "", `holds no partition 7 of "orders"`},
		{"shift below 0", []string{"shift orders:0=-3"}, "", "", "orders-0 would start at 2+(-3), outside 0.."},
		{"two changes for one partition", []string{"set orders=5", "shift orders:2=+1"}, "", "", "set orders=5 and shift orders:2=+1 both change partition orders-2"},
		{"shift of a marker", []string{"set orders:0=earliest", "shift orders:1=+1", "drop-topic payments"}, "[orders:0=earliest orders:1=4 orders:2=4]",
			"[orders-0 assigned earliest orders-1 assigned earliest orders-2 assigned earliest]", ""},
		{"rename onto a held topic", []string{"rename-topic orders=payments"}, "", "", `already holds topic "payments"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out")
			_, err := Run(kafkaFixture, dst, []Step{&Offsets{Operator: op, Changes: changes(t, tc.changes...)}}, Options{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
					t.Fatalf("a refused change left %s behind", dst)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, e := positions(t, dst)
			if fmt.Sprint(r) != tc.readers || fmt.Sprint(e) != tc.enum {
				t.Fatalf("readers %v\n enum %v\nwant %s\n     %s", r, e, tc.readers, tc.enum)
			}
		})
	}
}

// tsBase and tsOf: record i of partition p carries timestamp tsOf(p, i), as the oracle's
// KafkaBroker.timestamp writes them, so a time means the same offsets on the Go test's broker
// and the judge's.
const tsBase = 1_700_000_000_000

func tsOf(p, i int) int64 { return tsBase + 10*int64(i)*int64(p+1) }

// TestOffsetsOracle: Flink restores the job from what statecraft wrote (unclaimed state not
// allowed) against a real broker holding the same records plus two more per partition, and the
// records it reads show each partition resumed exactly where statecraft put it: shifted, set to
// a number, set to earliest (one partition, a whole topic), set to latest (one partition, a
// whole topic: nothing produced before the restore is read, everything after is), under a
// renamed topic with the carried offsets, at the offsets a real broker gave for a point in time
// (asked over SASL_SSL with a Kafka client properties file, from a migration script); and that a
// dropped topic is no longer read although the broker still has it. The SQL job (the table
// source under EXECUTE PLAN) shows shift, set and earliest, and in a second case rename, drop
// and a point in time together. A savepoint whose splits live in state files, edited in one
// subtask's splits only (the other's file carried over), is restored too, and so are Flink 1.12's
// savepoints of enumerator state versions 0 (edited) and 1 (as it is). One judge call (one
// broker, one job per case) checks every case.
func TestOffsetsOracle(t *testing.T) {
	oracletest.Require(t, "restores a KafkaSource from migrated offsets against a real Kafka broker")
	fixture := oracletest.Abs(t, kafkaFixture)
	dir := t.TempDir()
	counts := map[string][]int{"orders": {2, 3, 4}, "payments": {5, 6}} // the fixture job's records
	const more = 2

	// --to-timestamp asks a real broker holding the judge's records (under the renamed topic)
	broker := kafkatest.Start(t)
	broker.CreateTopics(t, map[string]int{"orders-mm": 3, "payments": 2})
	for topic, src := range map[string]string{"orders-mm": "orders", "payments": "payments"} {
		for p, n := range counts[src] {
			broker.Produce(t, topic, int32(p), n+more, func(i int) int64 { return tsOf(p, i) })
		}
	}
	props := filepath.Join(dir, "client.properties")
	if err := os.WriteFile(props, []byte("# SASL/PLAIN over TLS, the broker's own CA\n"+
		"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"+
		"    username=\""+kafkatest.User+"\" password=\""+kafkatest.Password+"\";\n"+
		"ssl.truststore.type=PEM\nssl.truststore.location="+broker.CAFile+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at, err := NewTimeLookup(strconv.Itoa(tsBase+25), broker.SASLSSL, props)
	if err != nil {
		t.Fatal(err)
	}
	// what cannot work is one error and no destination
	badProps := filepath.Join(dir, "bad.properties")
	b, _ := os.ReadFile(props)
	os.WriteFile(badProps, []byte(strings.Replace(string(b), kafkatest.Password, "wrong", 1)), 0o644)
	wrongPass, err := NewTimeLookup(strconv.Itoa(tsBase+25), broker.SASLSSL, badProps)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name    string
		at      *TimeLookup
		changes []string
		err     string
	}{
		{"topic not on the cluster", at, nil, "has no topic orders"},
		{"wrong password", wrongPass, []string{"rename-topic orders=orders-mm"}, "SASL"},
		{"two changes", at, []string{"rename-topic orders=orders-mm", "set payments:1=3"}, "both change partition payments-1"},
	} {
		dst := filepath.Join(dir, "bad")
		op, _ := ParseSelector("uid:kafka-source")
		_, err := Run(fixture, dst, []Step{&Offsets{Operator: op, Changes: changes(t, bad.changes...), AtTime: bad.at}}, Options{})
		if err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%s: %v, want an error with %q", bad.name, err, bad.err)
		}
		if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
			t.Errorf("%s: %s exists after the error", bad.name, dst)
		}
	}

	type judgeCase struct {
		Name      string         `json:"name"`
		Savepoint string         `json:"savepoint"`
		Plan      string         `json:"plan,omitempty"` // a SQL job's compiled plan: restored under EXECUTE PLAN
		Subscribe []string       `json:"subscribe"`
		Topics    string         `json:"topics,omitempty"` // a SQL case's 'topic' option on restore
		Expect    map[string]any `json:"expect"`           // first offset read per partition, or "latest"
	}
	var cases []judgeCase
	// the SQL job (the connector's table source) stopped by Flink after the same records
	sqlFixture := oracletest.Abs(t, sqlKafkaFixture)
	sqlOp := sqlSourceOperator(t, sqlFixture)
	sqlDst := filepath.Join(dir, "sql")
	if _, err := Run(sqlFixture, sqlDst, []Step{&Offsets{Operator: sqlOp, Changes: changes(t, "shift orders:1=-2", "set payments:0=1", "set orders:2=earliest")}}, Options{}); err != nil {
		t.Fatalf("sql: %v", err)
	}
	cases = append(cases, judgeCase{"sql", sqlDst, sqlFixture + ".plan.json", []string{"orders", "payments"}, "",
		map[string]any{"orders:0": 2, "orders:1": 1, "orders:2": 0, "payments:0": 1, "payments:1": 6}})
	// tsBase+25 falls on record 3 of partition 0 (ts +30), 2 of partition 1 (+40), 1 of 2 (+30)
	sqlDst2 := filepath.Join(dir, "sql-rename-drop-time")
	if _, err := Run(sqlFixture, sqlDst2, []Step{&Offsets{Operator: sqlOp, Changes: changes(t, "rename-topic orders=orders-mm", "drop-topic payments"), AtTime: at}}, Options{}); err != nil {
		t.Fatalf("sql rename drop time: %v", err)
	}
	cases = append(cases, judgeCase{"sql rename drop time", sqlDst2, sqlFixture + ".plan.json", nil, "orders-mm",
		map[string]any{"orders-mm:0": 3, "orders-mm:1": 2, "orders-mm:2": 1}})
	// the to-timestamp case comes from a migration script
	script := fmt.Sprintf("steps:\n  - offsets:\n      operator: uid:kafka-source\n      rename-topic: orders=orders-mm\n"+
		"      to-timestamp: %q\n      bootstrap-servers: %q\n      kafka-config: %q\n", strconv.Itoa(tsBase+25), broker.SASLSSL, props)
	timeSteps, err := ParseScript(strings.NewReader(script), "to-timestamp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	op, _ := ParseSelector("uid:kafka-source")
	for _, tc := range []struct {
		name      string
		fixture   string
		steps     []Step
		subscribe []string
		expect    map[string]any
	}{
		{"rename shift set", fixture, []Step{&Offsets{Operator: op, Changes: changes(t, "shift orders:1=-2", "set payments=earliest", "rename-topic orders=orders-mm")}},
			[]string{"orders-mm", "payments"},
			map[string]any{"orders-mm:0": 2, "orders-mm:1": 1, "orders-mm:2": 4, "payments:0": 0, "payments:1": 0}},
		{"drop latest", fixture, []Step{&Offsets{Operator: op, Changes: changes(t, "drop-topic payments", "set orders=latest")}},
			[]string{"orders"},
			map[string]any{"orders:0": "latest", "orders:1": "latest", "orders:2": "latest"}},
		{"to-timestamp", fixture, timeSteps,
			[]string{"orders-mm", "payments"},
			map[string]any{"orders-mm:0": 3, "orders-mm:1": 2, "orders-mm:2": 1, "payments:0": 3, "payments:1": 2}},
		// splits in state files: only subtask 0's change (orders-1, payments-1); subtask 1's file is
		// carried over as it is (TestOffsetsCarriesFiles)
		{"state files", oracletest.Abs(t, filesFixture), []Step{&Offsets{Operator: op, Changes: changes(t, "set orders:1=latest", "set payments:1=4")}},
			[]string{"orders", "payments"},
			map[string]any{"orders:0": 2, "orders:1": "latest", "orders:2": 4, "payments:0": 5, "payments:1": 4}},
		// Flink 1.12.2's savepoint (metadata version 3, enumerator state version 0 in coordinator
		// serde 0; testdata/flink-1.12): edited, Flink 2.3.0 restores it where statecraft wrote
		{"flink 1.12.2 enumerator v0", oracletest.Abs(t, "../testdata/flink-1.12/sources-1.12.2/kafka-datastream"),
			[]Step{&Offsets{Operator: op, Changes: changes(t, "shift orders:1=-2", "set payments:0=1")}},
			[]string{"orders", "payments"},
			map[string]any{"orders:0": 2, "orders:1": 1, "orders:2": 4, "payments:0": 1, "payments:1": 6}},
	} {
		dst := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		if _, err := Run(tc.fixture, dst, tc.steps, Options{}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cases = append(cases, judgeCase{Name: tc.name, Savepoint: dst, Subscribe: tc.subscribe, Expect: tc.expect})
	}
	// Flink 1.12.7's (enumerator state version 1) as Flink wrote it: 2.3.0 restores it as it is
	cases = append(cases, judgeCase{Name: "flink 1.12.7 enumerator v1", Savepoint: oracletest.Abs(t, "../testdata/flink-1.12/sources-1.12.7/kafka-datastream"),
		Subscribe: []string{"orders", "payments"}, Expect: map[string]any{"orders:0": 2, "orders:1": 3, "orders:2": 4, "payments:0": 5, "payments:1": 6}})
	broker.Stop() // the judge starts its own
	produce := map[string][]int{"orders": counts["orders"], "orders-mm": counts["orders"], "payments": counts["payments"]}
	b, _ = json.Marshal(map[string]any{"produce": produce, "more": more, "cases": cases})
	spec := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := oracletest.Run(t, "kafka-judge", spec)
	t.Logf("judge: %s", out)
	if err != nil {
		t.Fatalf("Flink did not resume where statecraft wrote: %v", err)
	}
}

// TestOffsetsScript: the offsets step of a migration script takes the command line's forms,
// one value or a list each.
func TestOffsetsScript(t *testing.T) {
	script := `steps:
  - offsets:
      operator: "uid:kafka-source"
      set: ["orders:0=1", "payments=committed"]
      shift: "orders:2=+3"
      rename-topic: orders=orders-mm
`
	steps, err := ParseScript(strings.NewReader(script), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if _, err := Run(kafkaFixture, dst, steps, Options{}); err != nil {
		t.Fatal(err)
	}
	r, _ := positions(t, dst)
	if want := "[orders-mm:0=1 orders-mm:1=3 orders-mm:2=7 payments:0=committed payments:1=committed]"; fmt.Sprint(r) != want {
		t.Fatalf("readers %v, want %s", r, want)
	}
	// from-file (CSV and JSON, as --from-file takes them) with a drop, in one step and in two
	dir := t.TempDir()
	csvFile := filepath.Join(dir, "mm2.csv")
	os.WriteFile(csvFile, []byte("topic,partition,offset\norders,0,0\norders,2,1\n"), 0o644)
	jsonFile := filepath.Join(dir, "mm2.json")
	os.WriteFile(jsonFile, []byte(`[{"topic": "orders", "partition": 1, "offset": 7}]`), 0o644)
	for _, tc := range []struct{ script, readers, enum string }{
		{"steps:\n  - offsets: {operator: \"uid:kafka-source\", from-file: " + csvFile + ", drop-topic: payments}\n",
			"[orders:0=0 orders:1=3 orders:2=1]", "[orders-0 assigned 0 orders-1 assigned earliest orders-2 assigned 1]"},
		{"steps:\n  - offsets: {operator: \"uid:kafka-source\", from-file: " + jsonFile + ", shift: orders:0=-1}\n" +
			"  - offsets: {operator: \"uid:kafka-source\", drop-topic: [payments], set: orders:2=earliest}\n",
			"[orders:0=1 orders:1=7 orders:2=earliest]", "[orders-0 assigned earliest orders-1 assigned 7 orders-2 assigned earliest]"},
	} {
		steps, err := ParseScript(strings.NewReader(tc.script), "s.yaml")
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "out")
		if _, err := Run(kafkaFixture, dst, steps, Options{}); err != nil {
			t.Fatalf("%s: %v", tc.script, err)
		}
		if r, e := positions(t, dst); fmt.Sprint(r) != tc.readers || fmt.Sprint(e) != tc.enum {
			t.Errorf("%s: readers %v\n enum %v\nwant %s\n     %s", tc.script, r, e, tc.readers, tc.enum)
		}
	}
	// a file that cannot be read is an error of the run, before anything is written
	steps, err = ParseScript(strings.NewReader("steps:\n  - offsets: {operator: \"uid:kafka-source\", from-file: "+filepath.Join(dir, "nope.csv")+"}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "out")
	if _, err := Run(kafkaFixture, bad, steps, Options{}); err == nil || !strings.Contains(err.Error(), "nope.csv: no such file") {
		t.Fatalf("missing from-file: %v", err)
	} else if _, serr := os.Stat(bad); !os.IsNotExist(serr) {
		t.Fatal("a refused script left DST behind")
	}
	for _, bad := range []struct{ body, err string }{
		{`{operator: "uid:kafka-source"}`, "give at least one of set, shift"},
		{`{operator: "uid:kafka-source", from-file: [a, b]}`, "cannot unmarshal !!seq into string"},
		{`{operator: "uid:kafka-source", shift: {a: b}}`, "shift: want a value or a list of them"},
		{`{operator: "uid:kafka-source", set: "orders:0=-9"}`, "want an offset >= 0"},
	} {
		_, err := ParseScript(strings.NewReader("steps:\n  - offsets: "+bad.body+"\n"), "s.yaml")
		if err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%s: %v, want %q", bad.body, err, bad.err)
		}
	}
}

// TestOffsets120Oracle: the same edit on a savepoint of Flink 1.20 with its Kafka connector
// (3.4.0-1.20, enumerator state version 2, which records partitions without offsets): Flink
// 1.20 restores what statecraft wrote and resumes where it says.
func TestOffsets120Oracle(t *testing.T) {
	oracletest.Require(t, "restores a Flink 1.20 KafkaSource from migrated offsets against a real Kafka broker")
	dir := t.TempDir()
	dst := filepath.Join(dir, "out")
	op, _ := ParseSelector("uid:kafka-source")
	steps := []Step{&Offsets{Operator: op, Changes: changes(t, "shift orders:2=-3", "set payments:0=1", "rename-topic payments=payments-mm")}}
	if _, err := Run(oracletest.Abs(t, "../testdata/flink-1.20/sources/kafka-datastream"), dst, steps, Options{}); err != nil {
		t.Fatal(err)
	}
	if r, e := positions(t, dst); fmt.Sprint(r) != "[orders:0=2 orders:1=3 orders:2=1 payments-mm:0=1 payments-mm:1=6]" || len(e) != 5 {
		t.Fatalf("readers %v enum %v", r, e)
	}
	b, _ := json.Marshal(map[string]any{"produce": map[string][]int{"orders": {2, 3, 4}, "payments-mm": {5, 6}}, "more": 2,
		"cases": []map[string]any{{"name": "1.20", "savepoint": dst, "subscribe": []string{"orders", "payments-mm"},
			"expect": map[string]int{"orders:0": 2, "orders:1": 3, "orders:2": 1, "payments-mm:0": 1, "payments-mm:1": 6}}}})
	spec := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(spec, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := oracletest.RunVersion(t, "1.20.0", "kafka-judge", spec)
	t.Logf("judge: %s", out)
	if err != nil {
		t.Fatalf("Flink 1.20 did not resume where statecraft wrote: %v", err)
	}
}

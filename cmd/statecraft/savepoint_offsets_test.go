package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const kafkaFixture = "../../testdata/sources/kafka-datastream"

// kafkaRead is the "read" part of the fixture's expectation: where the job stood per partition.
func kafkaRead(t *testing.T) map[string]int64 {
	t.Helper()
	return kafkaReadFrom(t, kafkaFixture)
}

func kafkaReadFrom(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	var exp struct {
		Read []struct {
			Topic      string `json:"topic"`
			Partition  int    `json:"partition"`
			NextOffset int64  `json:"nextOffset"`
		} `json:"read"`
	}
	if err := json.Unmarshal(readFile(t, dir+".expect.json"), &exp); err != nil {
		t.Fatal(err)
	}
	m := map[string]int64{}
	for _, r := range exp.Read {
		m[fmt.Sprintf("%s:%d", r.Topic, r.Partition)] = r.NextOffset
	}
	return m
}

func TestSavepointOffsetsFormats(t *testing.T) {
	want := kafkaRead(t)

	code, out, errs := runCLI("savepoint", "offsets", kafkaFixture, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Sources []offsetsSource `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Sources) != 1 || doc.Sources[0].Operator != "uid:kafka-source" || doc.Sources[0].Connector != "kafka" {
		t.Fatalf("sources %+v", doc.Sources)
	}
	got := map[string]int64{}
	for _, s := range doc.Sources[0].Splits {
		if s.Stopping != "none" || s.Partition == nil || s.StartingOffset == nil {
			t.Errorf("split %+v", s)
			continue
		}
		got[fmt.Sprintf("%s:%d", s.Topic, *s.Partition)] = *s.StartingOffset
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("json offsets %v, the job read up to %v", got, want)
	}
	e := doc.Sources[0].Enumerator
	if e == nil || e.SerializerVersion != 3 || e.InitialDiscoveryFinished == nil || !*e.InitialDiscoveryFinished || len(e.Partitions) != len(want) {
		t.Fatalf("enumerator %+v", e)
	}
	for _, p := range e.Partitions {
		if p.Status != "assigned" {
			t.Errorf("enumerator partition %+v, want assigned", p)
		}
	}

	code, out, errs = runCLI("savepoint", "offsets", kafkaFixture, "--csv", "--operator", "uid:kafka-source")
	if code != 0 {
		t.Fatalf("csv exit %d: %s", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != len(want)+1 || strings.Join(rows[0], ",") != "operator,name,subtask,connector,topic,partition,starting,stopping" {
		t.Fatalf("csv %q, %v", out, err)
	}
	var lines []string
	for _, r := range rows[1:] {
		lines = append(lines, r[4]+":"+r[5]+"="+r[6])
	}
	sort.Strings(lines)
	var wantLines []string
	for k, v := range want {
		wantLines = append(wantLines, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(wantLines)
	if fmt.Sprint(lines) != fmt.Sprint(wantLines) {
		t.Errorf("csv rows %v, want %v", lines, wantLines)
	}

	code, out, _ = runCLI("savepoint", "offsets", kafkaFixture)
	if code != 0 || !strings.Contains(out, "initial discovery finished; assigned 5 [orders-0 orders-1 orders-2 payments-0 payments-1]; pending 0 []") {
		t.Errorf("table exit %d:\n%s", code, out)
	}
}

func TestSavepointOffsetsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{kafkaFixture, "--json", "--csv"}, "--json and --csv exclude each other"},
		{[]string{kafkaFixture, "--operator", "uid:note"}, "--operator uid:note: not a source"},
		{[]string{kafkaFixture, "--operator", "uid:nope"}, "no such operator in the savepoint (it has uid:kafka-source"},
	} {
		code, _, errs := runCLI(append([]string{"savepoint", "offsets"}, tc.args...)...)
		if code != 1 || !strings.Contains(errs, tc.err) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errs, tc.err)
		}
	}
	// a savepoint without sources lists none, and says so
	code, out, errs := runCLI("savepoint", "offsets", "../../testdata/savepoints/keyed-hashmap")
	if code != 0 || !strings.Contains(out, "no source operators") {
		t.Errorf("keyed-hashmap: exit %d %q %q", code, out, errs)
	}
}

// TestSavepointDumpDecodesKafkaSplits: dump shows the reader's splits decoded, with the same
// offsets the job read up to, instead of base64.
func TestSavepointDumpDecodesKafkaSplits(t *testing.T) {
	want := kafkaRead(t)
	code, out, errs := runCLI("savepoint", "dump", kafkaFixture, "--operator", "uid:kafka-source", "--state", "SourceReaderState")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec struct {
			Value offsetsSplitValue `json:"value"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Value.Connector != "kafka" || rec.Value.Stopping != "none" {
			t.Fatalf("line %s: %v", line, err)
		}
		got[fmt.Sprintf("%s:%d", rec.Value.Topic, rec.Value.Partition)] = rec.Value.StartingOffset
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("dump offsets %v, the job read up to %v", got, want)
	}
}

func TestMigrateOffsetsCLI(t *testing.T) {
	dir := t.TempDir()
	csvFile := filepath.Join(dir, "offsets.csv")
	os.WriteFile(csvFile, []byte("topic,partition,offset\norders,0,1\npayments,1,3\n"), 0o644)
	jsonFile := filepath.Join(dir, "offsets.json")
	os.WriteFile(jsonFile, []byte(`[{"topic":"orders","partition":2,"offset":0}]`), 0o644)
	badProps := filepath.Join(dir, "client.properties")
	os.WriteFile(badProps, []byte("security.protocol=PLAINTEXT\nlinger.ms=5\n"), 0o644)
	dst := filepath.Join(dir, "out")
	code, out, errs := runCLI("migrate", "offsets", kafkaFixture, dst, "--operator", "uid:kafka-source",
		"--from-file", csvFile, "--shift", "orders:1=+1", "--drop-topic", "nope")
	if code != 1 || !strings.Contains(errs, `holds no topic "nope"`) {
		t.Fatalf("exit %d %q %q", code, out, errs)
	}
	code, out, errs = runCLI("migrate", "offsets", kafkaFixture, dst, "--operator", "uid:kafka-source",
		"--from-file", csvFile, "--shift", "orders:1=+1", "--dry-run")
	if code != 0 || !strings.Contains(out, "subtask 0  orders:1  3 -> 4") || !strings.Contains(out, "orders:0  2 -> 1") {
		t.Fatalf("dry run exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatal("a dry run wrote DST")
	}
	code, out, errs = runCLI("migrate", "offsets", kafkaFixture, dst, "--operator", "uid:kafka-source", "--from-file", jsonFile)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCLI("savepoint", "offsets", dst, "--csv")
	if code != 0 || !strings.Contains(out, "orders,2,0,none") || !strings.Contains(out, "orders,1,3,none") {
		t.Fatalf("after: %s", out)
	}
	for _, tc := range []struct{ args, err string }{
		{"--set orders:x=1", "want TOPIC:PARTITION with a partition number >= 0"},
		{"--set orders:1=-4", "want an offset >= 0, earliest, latest or committed"},
		{"--shift orders=5", "want +N or -N"},
		{"--rename-topic orders=orders", "two different topic names"},
		{"", "give at least one of --set"},
		// connection settings that cannot take effect, bad times and properties: refused before any I/O
		{"--set orders:0=1 --bootstrap-servers h:1", "bootstrap-servers and kafka-config are used only with to-timestamp"},
		{"--to-timestamp yesterday --bootstrap-servers h:1", "want milliseconds since the epoch or RFC 3339"},
		{"--to-timestamp 5", "no bootstrap servers"},
		{"--to-timestamp 5 --bootstrap-servers h:1 --kafka-config " + badProps, "linger.ms not supported"},
	} {
		args := append([]string{"migrate", "offsets", kafkaFixture, dst + "2", "--operator", "uid:kafka-source"}, strings.Fields(tc.args)...)
		if code, _, errs := runCLI(args...); code != 1 || !strings.Contains(errs, tc.err) {
			t.Errorf("%s: exit %d %q, want %q", tc.args, code, errs, tc.err)
		}
	}
}

// TestSavepointOffsetsFlink117: savepoints Flink 1.17 wrote (operator state proxy version 5) list
// where every partition resumes, for the KafkaSource and for the legacy FlinkKafkaConsumer (its
// union state holds the last offset emitted; the listing shows the next one), as the job read.
func TestSavepointOffsetsFlink117(t *testing.T) {
	for _, c := range []struct{ dir, connector string }{
		{"../../testdata/flink-1.17/sources/kafka-datastream", "kafka"},
		{"../../testdata/flink-1.17/sources/flink-kafka-consumer", "kafka-legacy"},
	} {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			want := kafkaReadFrom(t, c.dir)
			code, out, errs := runCLI("savepoint", "offsets", c.dir, "--json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var doc struct {
				Sources []offsetsSource `json:"sources"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Sources) != 1 || doc.Sources[0].Connector != c.connector {
				t.Fatalf("sources %+v", doc.Sources)
			}
			got := map[string]int64{}
			for _, s := range doc.Sources[0].Splits {
				if s.Partition == nil || s.StartingOffset == nil || s.Starting != fmt.Sprint(*s.StartingOffset) {
					t.Errorf("split %+v", s)
					continue
				}
				got[fmt.Sprintf("%s:%d", s.Topic, *s.Partition)] = *s.StartingOffset
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("starting offsets %v, the job read up to %v", got, want)
			}
			// savepoint dump shows the same decoded values, not base64
			code, out, errs = runCLI("savepoint", "dump", c.dir, "--operator", doc.Sources[0].Operator)
			if code != 0 {
				t.Fatalf("dump: exit %d: %s", code, errs)
			}
			dumped := map[string]int64{}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if strings.Contains(line, `"mode":"coordinator"`) {
					continue // the enumerator (TestSavepointDumpKafkaEnumerator)
				}
				var rec struct {
					Value struct {
						Topic     string `json:"topic"`
						Partition int    `json:"partition"`
						Starting  string `json:"starting"`
					} `json:"value"`
				}
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				var n int64
				fmt.Sscan(rec.Value.Starting, &n)
				dumped[fmt.Sprintf("%s:%d", rec.Value.Topic, rec.Value.Partition)] = n
			}
			if fmt.Sprint(dumped) != fmt.Sprint(want) {
				t.Errorf("dump: starting offsets %v, the job read up to %v\n%s", dumped, want, out)
			}
		})
	}
}

// TestInspectShowsSources: savepoint inspect decodes every source's splits (in --json and in a
// sources section of the table) to where each partition resumes, as the job read.
func TestInspectShowsSources(t *testing.T) {
	for _, dir := range []string{kafkaFixture, "../../testdata/sources/sql-kafka", "../../testdata/flink-1.20/sources/kafka-datastream",
		"../../testdata/flink-1.17/sources/kafka-datastream", "../../testdata/flink-1.17/sources/flink-kafka-consumer"} {
		t.Run(strings.TrimPrefix(dir, "../../testdata/"), func(t *testing.T) {
			want := kafkaReadFrom(t, dir)
			code, out, errs := runCLI("savepoint", "inspect", dir, "--json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var doc struct {
				Operators []struct {
					Source *offsetsSource `json:"source"`
				} `json:"operators"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			n := 0
			for _, op := range doc.Operators {
				if op.Source == nil {
					continue
				}
				n++
				for _, s := range op.Source.Splits {
					if s.Partition != nil && s.StartingOffset != nil {
						got[fmt.Sprintf("%s:%d", s.Topic, *s.Partition)] = *s.StartingOffset
					}
				}
			}
			if n != 1 || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%d sources, starting offsets %v; the job read up to %v", n, got, want)
			}
			code, out, errs = runCLI("savepoint", "inspect", dir, "--wide")
			if code != 0 || !strings.Contains(out, "\nsources:\n") || !strings.Contains(out, "orders") {
				t.Errorf("table: exit %d %s\n%s", code, errs, out)
			}
		})
	}
}

// TestSavepointOffsetsFileSource: a FileSource savepoint Flink 2.3.0 took part way through a file
// lists its reader split (path, region, position) and the enumerator's pending splits and
// processed paths as the connector's serializers read them (file-source.expect.json), in offsets,
// dump and inspect alike.
func TestSavepointOffsetsFileSource(t *testing.T) {
	const dir = "../../testdata/sources/file-source"
	type split struct {
		ID             string `json:"id"`
		Path           string `json:"path"`
		Offset, Length int64
		ReaderPosition *struct {
			Offset             int64 `json:"offset"`
			RecordsAfterOffset int64 `json:"recordsAfterOffset"`
		} `json:"readerPosition"`
	}
	var exp struct {
		Splits     []split `json:"splits"`
		Enumerator struct {
			PendingSplits         []split  `json:"pendingSplits"`
			AlreadyProcessedPaths []string `json:"alreadyProcessedPaths"`
		} `json:"enumerator"`
	}
	if err := json.Unmarshal(readFile(t, dir+".expect.json"), &exp); err != nil {
		t.Fatal(err)
	}
	text := func(path string, off, length int64, pos *int64, n *int64) string {
		if pos == nil {
			return fmt.Sprintf("%s %d+%d", path, off, length)
		}
		return fmt.Sprintf("%s %d+%d at %d+%d", path, off, length, *pos, *n)
	}
	var want, wantPending []string
	for _, s := range exp.Splits {
		if p := s.ReaderPosition; p != nil {
			want = append(want, text(s.Path, s.Offset, s.Length, &p.Offset, &p.RecordsAfterOffset))
		} else {
			want = append(want, text(s.Path, s.Offset, s.Length, nil, nil))
		}
	}
	for _, s := range exp.Enumerator.PendingSplits {
		wantPending = append(wantPending, text(s.Path, s.Offset, s.Length, nil, nil))
	}
	sort.Strings(wantPending)

	code, out, errs := runCLI("savepoint", "offsets", dir, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Sources []offsetsSource `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Sources) != 1 || doc.Sources[0].Connector != "files" || doc.Sources[0].Enumerator == nil {
		t.Fatalf("sources %s", out)
	}
	var got, gotPending []string
	for _, s := range doc.Sources[0].Splits {
		f := s.File
		got = append(got, text(f.Path, f.Offset, f.Length, f.PositionOffset, f.RecordsAfterOffset))
	}
	e := doc.Sources[0].Enumerator
	for _, f := range e.PendingFiles {
		gotPending = append(gotPending, text(f.Path, f.Offset, f.Length, f.PositionOffset, f.RecordsAfterOffset))
	}
	sort.Strings(gotPending)
	if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotPending) != fmt.Sprint(wantPending) ||
		fmt.Sprint(e.ProcessedPaths) != fmt.Sprint(exp.Enumerator.AlreadyProcessedPaths) {
		t.Errorf("got splits %v pending %v processed %v\nwant %v pending %v processed %v", got, gotPending, e.ProcessedPaths,
			want, wantPending, exp.Enumerator.AlreadyProcessedPaths)
	}

	code, out, errs = runCLI("savepoint", "dump", dir, "--operator", "uid:file-source", "--state", "SourceReaderState")
	var rec struct {
		Value struct {
			Connector string `json:"connector"`
			offsetsFile
		} `json:"value"`
	}
	if code != 0 || json.Unmarshal([]byte(strings.TrimSpace(out)), &rec) != nil {
		t.Fatalf("dump: exit %d %s\n%s", code, errs, out)
	}
	if f := rec.Value.offsetsFile; rec.Value.Connector != "files" || text(f.Path, f.Offset, f.Length, f.PositionOffset, f.RecordsAfterOffset) != want[0] {
		t.Errorf("dump %s, want %s", out, want[0])
	}

	code, out, errs = runCLI("savepoint", "inspect", dir, "--wide")
	if code != 0 || !strings.Contains(out, "\nsources:\n") || !strings.Contains(out, exp.Splits[0].Path) || !strings.Contains(out, "already processed 3") {
		t.Errorf("inspect: exit %d %s\n%s", code, errs, out)
	}
}

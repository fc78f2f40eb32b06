package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/stats"
)

// statsFixtures are every savepoint Flink wrote for the tests (2.3 and 1.20).
func statsFixtures(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, g := range []string{"../../testdata/savepoints/*/_metadata", "../../testdata/flink-1.20/savepoints/*/_metadata"} {
		m, _ := filepath.Glob(g)
		for _, f := range m {
			dirs = append(dirs, filepath.Dir(f))
		}
	}
	if len(dirs) == 0 {
		t.Skip("no savepoint fixtures (testdata/oracle/run.sh savepoints)")
	}
	return dirs
}

// eachFixture runs fn in a subtest on every fixture, opened.
func eachFixture(t *testing.T, fn func(t *testing.T, dir string, sp *savepoint.Savepoint)) {
	for _, dir := range statsFixtures(t) {
		t.Run(filepath.Base(filepath.Dir(dir))+"/"+filepath.Base(dir), func(t *testing.T) {
			sp, err := savepoint.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			fn(t, dir, sp)
		})
	}
}

// TestStatsCountsMatchDump: on every fixture, the entries, distinct keys and operator-state
// elements stats counts are those of the records `savepoint dump` prints; the bytes of the key
// groups, subtasks and states add up to one another, and for an uncompressed canonical savepoint
// to the state files less their headers; each top key's entries are its records in the dump.
func TestStatsCountsMatchDump(t *testing.T) {
	eachFixture(t, func(t *testing.T, dir string, sp *savepoint.Savepoint) {
		checked := 0
		for _, op := range sp.Metadata.Operators {
			got, err := measureOperator(sp, op, stats.Options{Top: 3})
			if err != nil {
				t.Fatalf("%s: %v", opLabel(op), err)
			}
			// What dump prints, counted the same way.
			entries := map[string]int64{}
			keys := map[string]map[string]int64{}
			opKeys := map[string]bool{}
			elements := map[string]int64{}
			err = dumpOperator(sp, op, "", func(r dumpRecord) error {
				if r.Operator != nil {
					elements[r.Operator.State]++
					return nil
				}
				k := r.Keyed
				kj, err := json.Marshal(k.Key)
				if err != nil {
					return err
				}
				entries[k.State]++
				if keys[k.State] == nil {
					keys[k.State] = map[string]int64{}
				}
				keys[k.State][string(kj)]++
				opKeys[string(kj)] = true
				return nil
			})
			if err != nil {
				t.Fatalf("%s: dump: %v", opLabel(op), err)
			}
			var total int64
			for _, s := range got.States {
				total += s.Entries
				if s.Entries != entries[s.Name] {
					t.Errorf("%s state %s: stats counts %d entries, dump prints %d", opLabel(op), s.Name, s.Entries, entries[s.Name])
				}
				if s.DistinctKeys != int64(len(keys[s.Name])) {
					t.Errorf("%s state %s: stats counts %d distinct keys, dump prints %d", opLabel(op), s.Name, s.DistinctKeys, len(keys[s.Name]))
				}
				for i, k := range s.Top {
					if n := keys[s.Name][string(k.Key)]; n != k.Entries {
						t.Errorf("%s state %s: top key %s has %d entries, dump prints %d", opLabel(op), s.Name, k.Key, k.Entries, n)
					}
					if i > 0 && k.Bytes > s.Top[i-1].Bytes {
						t.Errorf("%s state %s: top keys out of order: %v", opLabel(op), s.Name, s.Top)
					}
				}
				if want := min(3, len(keys[s.Name])); len(s.Top) != want {
					t.Errorf("%s state %s: %d top keys, want %d", opLabel(op), s.Name, len(s.Top), want)
				}
			}
			var dumped int64
			for _, n := range entries {
				dumped += n
			}
			if total != dumped || got.Entries != dumped {
				t.Errorf("%s: stats counts %d entries (%d by state), dump prints %d", opLabel(op), got.Entries, total, dumped)
			}
			if got.DistinctKeys != int64(len(opKeys)) {
				t.Errorf("%s: stats counts %d distinct keys, dump prints %d", opLabel(op), got.DistinctKeys, len(opKeys))
			}
			var gotElems int
			for _, s := range got.OperatorStates {
				gotElems++
				if s.Elements != elements[s.Name] {
					t.Errorf("%s operator state %s: stats counts %d elements, dump prints %d", opLabel(op), s.Name, s.Elements, elements[s.Name])
				}
			}
			if gotElems != len(elements) {
				t.Errorf("%s: stats lists %d operator states, dump prints %d", opLabel(op), gotElems, len(elements))
			}
			checkStatsBytes(t, sp, got)
			checked++
		}
		if checked == 0 {
			t.Fatal("no operator checked")
		}
	})
}

// checkStatsBytes checks that the bytes add up: key groups = subtasks = states + 2 per block =
// the stored blocks when they are not compressed.
func checkStatsBytes(t *testing.T, sp *savepoint.Savepoint, o statsOperator) {
	t.Helper()
	var kg, sub, st, blocks int64
	for _, g := range o.KeyGroups.All {
		kg += g.Bytes
		if g.Entries > 0 {
			blocks++
		}
	}
	for _, g := range o.Subtasks.All {
		sub += g.Bytes
	}
	for _, s := range o.States {
		st += s.Bytes()
	}
	if o.Native {
		blocks = 0
	}
	if kg != o.Bytes || sub != o.Bytes || st+2*blocks != o.Bytes {
		t.Errorf("%s: bytes do not add up: operator %d, key groups %d, subtasks %d, states %d + %d blocks", o.ID, o.Bytes, kg, sub, st, blocks)
	}
	if o.Native || o.Entries == 0 {
		return
	}
	op := sp.Metadata.Operators[slices.IndexFunc(sp.Metadata.Operators, func(m *metadata.OperatorState) bool { return m.ID.String() == o.ID })]
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	if subs[0].Header.Compressed {
		if o.StoredBytes <= 0 {
			t.Errorf("%s: %d bytes stored", o.ID, o.StoredBytes)
		}
		return
	}
	if o.StoredBytes != o.Bytes {
		t.Errorf("%s: key groups hold %d bytes, the state files less their headers %d", o.ID, o.Bytes, o.StoredBytes)
	}
}

func TestStatsCLI(t *testing.T) {
	sp := migrateFixture(t, "keyed-hashmap")
	t.Setenv("COLUMNS", "60")
	code, out, errOut := runCLI("savepoint", "stats", "--top", "2", sp)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"operator uid:int-keyed", "90 entries, 12 distinct keys", "skew", "top keys by bytes", "_timer_state/event_user-timers"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The charts fit the width: the subtask bars and key-group rows (tables may be wider).
	for _, l := range strings.Split(out, "\n") {
		if strings.ContainsAny(l, "█▁▂▃▄▅▆▇") && utf8.RuneCountInString(l) > 60 {
			t.Errorf("chart line wider than 60 columns: %q", l)
		}
	}
	code, out, errOut = runCLI("savepoint", "stats", "--json", "--operator", "uid:int-keyed", sp)
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var doc struct {
		Operators []struct {
			UID     string `json:"uid"`
			Entries int64  `json:"entries"`
			States  []struct {
				Name string            `json:"name"`
				Top  []json.RawMessage `json:"topKeys"`
			} `json:"states"`
		} `json:"operators"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(doc.Operators) != 1 || doc.Operators[0].UID != "int-keyed" || doc.Operators[0].Entries != 90 || len(doc.Operators[0].States[0].Top) != 10 {
		t.Errorf("--json: %s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--top", "-1", sp}, "--top -1"},
		{[]string{"--operator", "uid:nope", sp}, "no such operator"},
		{[]string{sp, sp}, "want exactly one PATH"},
		{[]string{filepath.Join(t.TempDir(), "none")}, "none"},
	} {
		code, _, errOut := runCLI(append([]string{"savepoint", "stats"}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 1 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestStatsMatchesOracleReading: the entries and distinct keys stats counts per keyed state, the
// timers per kind and the elements per operator state are those of the State Processor API's
// reading of every fixture (the oracle's <name>.expect.json).
func TestStatsMatchesOracleReading(t *testing.T) {
	for _, ef := range fixtureExpectations(t) {
		name := strings.TrimSuffix(filepath.Base(ef), ".expect.json")
		t.Run(name, func(t *testing.T) {
			statsMatchReading(t, filepath.Join(filepath.Dir(ef), name), readDumpExpectation(t, ef))
		})
	}
}

// statsMatchReading checks the counts stats gives for the savepoint or checkpoint at dir against
// exp, the State Processor API's reading of it.
func statsMatchReading(t *testing.T, dir string, exp dumpExpectation) {
	t.Helper()
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	for _, eo := range exp.Operators {
		i := slices.IndexFunc(sp.Metadata.Operators, func(m *metadata.OperatorState) bool { return m.ID.String() == eo.UIDHash })
		if i < 0 {
			t.Fatalf("operator %s of the expectation is not in the savepoint", eo.UIDHash)
		}
		got, err := measureOperator(sp, sp.Metadata.Operators[i], stats.Options{})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*stats.State{}
		timers := map[string]int64{}
		for _, s := range got.States {
			byName[s.Name] = s
			if s.Kind == "timer" {
				kind := "processing"
				if strings.HasPrefix(s.Name, "_timer_state/event_") {
					kind = "event"
				}
				timers[kind] += s.Entries
			}
		}
		for _, es := range eo.KeyedStates {
			keys := map[string]bool{}
			for _, e := range es.Entries {
				var entry struct{ Key json.RawMessage }
				if err := json.Unmarshal(e, &entry); err != nil {
					t.Fatal(err)
				}
				k, err := canonical(entry.Key)
				if err != nil {
					t.Fatal(err)
				}
				keys[k] = true
			}
			s := byName[es.Name]
			if s == nil {
				t.Errorf("%s: state %s read by Flink, not by stats", eo.UIDHash, es.Name)
				continue
			}
			if s.Entries != int64(len(es.Entries)) || s.DistinctKeys != int64(len(keys)) {
				t.Errorf("%s state %s: stats counts %d entries, %d keys; Flink read %d, %d", eo.UIDHash, es.Name, s.Entries, s.DistinctKeys, len(es.Entries), len(keys))
			}
		}
		want := map[string]int64{}
		for _, e := range eo.Timers {
			var tm struct{ Kind string }
			json.Unmarshal(e, &tm)
			want[tm.Kind]++
		}
		for _, k := range []string{"event", "processing"} {
			if timers[k] != want[k] {
				t.Errorf("%s: stats counts %d %s timers, Flink read %d", eo.UIDHash, timers[k], k, want[k])
			}
		}
		for _, es := range eo.OperatorStates {
			j := slices.IndexFunc(got.OperatorStates, func(s statsOperatorState) bool { return s.Name == es.Name })
			if j < 0 {
				t.Errorf("%s operator state %s: not in stats %+v", eo.UIDHash, es.Name, got.OperatorStates)
				continue
			}
			n := got.OperatorStates[j].Elements
			if es.Mode == "broadcast" {
				n = got.OperatorStates[j].PerCopy // Flink reads one copy
			}
			if n != int64(len(es.Entries)) {
				t.Errorf("%s operator state %s: stats %+v, Flink read %d elements", eo.UIDHash, es.Name, got.OperatorStates, len(es.Entries))
			}
		}
	}
}

// TestStatsTimes: on every fixture, the TTL timestamps and timer timestamps stats summarises are
// those of the dump: counts, oldest/newest and earliest/latest; every value and timer lands in
// exactly one bucket; at the newest access no age is in the future, at the earliest timer none
// is due and those of the earliest millisecond fall in the first minute.
func TestStatsTimes(t *testing.T) {
	sawTTL, sawTimers := false, false
	eachFixture(t, func(t *testing.T, dir string, sp *savepoint.Savepoint) {
		for _, op := range sp.Metadata.Operators {
			ttl := map[string][]int64{}
			timers := map[string][]int64{}
			if err := dumpOperator(sp, op, "", func(r dumpRecord) error {
				if k := r.Keyed; k != nil {
					switch ts := k.TTL.(type) {
					case int64:
						ttl[k.State] = append(ttl[k.State], ts)
					case []int64:
						ttl[k.State] = append(ttl[k.State], ts...)
					}
					if k.Kind == "timer" {
						timers[k.State] = append(timers[k.State], k.Timestamp)
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, pass := range []string{"newest", "earliest"} {
				var at int64
				for _, ts := range ttl {
					if pass == "newest" {
						at = max(at, slices.Max(ts))
					}
				}
				first := true
				for _, ts := range timers {
					if pass == "earliest" && (first || slices.Min(ts) < at) {
						at, first = slices.Min(ts), false
					}
				}
				got, err := measureOperator(sp, op, stats.Options{At: at})
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range got.States {
					if want := ttl[s.Name]; len(want) > 0 {
						sawTTL = true
						var inBuckets int64
						for _, b := range s.TTL.Buckets {
							inBuckets += b.Count
						}
						if s.TTL.Values != int64(len(want)) || inBuckets != s.TTL.Values || s.TTL.Oldest != slices.Min(want) || s.TTL.Newest != slices.Max(want) {
							t.Errorf("%s state %s: ttl %+v; dump has %d timestamps %d..%d", opLabel(op), s.Name, s.TTL, len(want), slices.Min(want), slices.Max(want))
						}
						if pass == "newest" && s.TTL.Buckets[0].Count != 0 {
							t.Errorf("%s state %s: %d ages in the future at the newest access", opLabel(op), s.Name, s.TTL.Buckets[0].Count)
						}
					} else if s.TTL != nil {
						t.Errorf("%s state %s: ttl ages of a state without TTL timestamps", opLabel(op), s.Name)
					}
					if want := timers[s.Name]; len(want) > 0 {
						sawTimers = true
						tm := s.Timers
						var sum int64
						for _, n := range tm.NextHour {
							sum += n
						}
						if tm.Earliest != slices.Min(want) || tm.Latest != slices.Max(want) || tm.Due+sum+tm.Later != int64(len(want)) {
							t.Errorf("%s state %s: timers %+v; dump has %d timers %d..%d", opLabel(op), s.Name, tm, len(want), slices.Min(want), slices.Max(want))
						}
						if pass == "earliest" && tm.Earliest == at && (tm.Due != 0 || tm.NextHour[0] == 0) {
							t.Errorf("%s state %s: at the earliest timer: %d due, %d in the first minute", opLabel(op), s.Name, tm.Due, tm.NextHour[0])
						}
					}
				}
			}
		}
	})
	if !sawTTL || !sawTimers {
		t.Errorf("fixtures had TTL values: %v, timers: %v; the test checks nothing without them", sawTTL, sawTimers)
	}
}

// TestStatsFitsColumns (#17): at COLUMNS=60 and 80 every line of `savepoint stats` on every
// fixture fits, the state table still shows each state's entries and keys, and what was hidden
// is named; --wide prints the full table.
func TestStatsFitsColumns(t *testing.T) {
	for _, width := range []int{60, 80} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			t.Setenv("COLUMNS", strconv.Itoa(width))
			narrowed := false
			for _, dir := range statsFixtures(t) {
				code, out, errOut := runCLI("savepoint", "stats", "--top", "3", dir)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", dir, code, errOut)
				}
				for _, l := range strings.Split(out, "\n") {
					if n := utf8.RuneCountInString(l); n > width {
						t.Errorf("%s: line of %d columns at COLUMNS=%d: %q", dir, n, width, l)
					}
				}
				if strings.Contains(out, "with --wide") {
					narrowed = true
				}
				code, wide, _ := runCLI("savepoint", "stats", "--top", "3", "--wide", dir)
				if code != 0 || strings.Contains(out, "KIND") != strings.Contains(wide, "FRAME BYTES  MEAN VALUE  MAX VALUE") {
					t.Errorf("%s: --wide: exit %d, no full state table:\n%s", dir, code, wide)
				}
			}
			if width == 60 && !narrowed {
				t.Error("no fixture needed a narrowed table at 60 columns: the test checks nothing")
			}
		})
	}
}

// TestStatsNextHourFits: the timers' next-hour bar (60 columns beside a 36-column label) fits
// COLUMNS too: on its own line at 80, two minutes a column at 60, beside its label when nothing
// is fitted. --at is put half an hour before the fixture's earliest timer (Flink 1.20's RANGE
// over aggregate registers a processing-time cleanup timer an hour after its last record), so
// the bar is drawn whenever the test runs; TestStatsFitsColumns uses "now" and drew it only in
// the hour after the fixture was made.
func TestStatsNextHourFits(t *testing.T) {
	dir := "../../testdata/flink-1.20/savepoints/upgrade-over-range"
	t.Setenv("COLUMNS", "")
	code, out, errOut := runCLI("savepoint", "stats", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m := regexp.MustCompile(`timers \S+: earliest (\S+),`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("%s: stats shows no timers:\n%s", dir, out)
	}
	earliest, err := time.Parse(time.RFC3339Nano, m[1])
	if err != nil {
		t.Fatal(err)
	}
	at := earliest.Add(-30 * time.Minute).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		columns, want string
	}{
		{"", "  next hour, one column per minute: ."},
		{"80", "  next hour, one column per minute:\n  ."},
		{"60", "  next hour, one column per 2 minutes:\n  ."},
	} {
		t.Setenv("COLUMNS", tc.columns)
		code, out, errOut := runCLI("savepoint", "stats", "--at", at, dir)
		if code != 0 {
			t.Fatalf("COLUMNS=%q: exit %d: %s", tc.columns, code, errOut)
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("COLUMNS=%q: no %q in:\n%s", tc.columns, tc.want, out)
		}
		if n, _ := strconv.Atoi(tc.columns); n > 0 {
			for _, l := range strings.Split(out, "\n") {
				if c := utf8.RuneCountInString(l); c > n {
					t.Errorf("COLUMNS=%d: line of %d columns: %q", n, c, l)
				}
			}
		}
	}
}

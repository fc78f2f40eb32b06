package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/internal/fittable"
	"github.com/statecraft/statecraft/migrate"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/opstate"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
	"github.com/statecraft/statecraft/stateparquet"
)

func init() {
	register([]string{"savepoint"}, func() *cli.Command {
		return &cli.Command{
			Name:      "dump",
			Usage:     "print the state of one operator (or of all): one record per key (and namespace, map key), timer and operator-state element",
			ArgsUsage: "PATH (a savepoint directory or its _metadata file)",
			Description: "Keyed records: {state, keyGroup, key, namespace, userKey, value[, ttlTimestamp]}.\n" +
				"Timers: {state, keyGroup, kind, key, namespace, timestamp}.\n" +
				"Operator state: {state, mode, subtask, index[, key], value}.\n" +
				"Coordinator state: {state: \"(coordinator)\", mode: \"coordinator\", value}: a FLIP-27 source's\n" +
				"enumerator as savepoint offsets --json shows it (Kafka and FileSource decoded), else base64.\n" +
				"Values whose serializer statecraft cannot decode are shown as {serializer, base64}.\n" +
				"Without --operator every operator is dumped into one stream, each record naming its operator\n" +
				"first ({\"operator\": \"uid:NAME\" or \"hash:HEX\", ...}; an operator column in csv and table).\n" +
				"--format parquet --operator OP -o FILE|DIR/ writes each keyed state (and timer state) to its own\n" +
				"Parquet file, columns typed from the serializer snapshots (see the README); operator state stays with jsonl.\n" +
				"Its pages are Snappy-compressed by default, as Spark, pyarrow/pandas and DuckDB write Parquet (about\n" +
				"3.5x smaller than none for little CPU, and every Parquet reader has Snappy); --compression zstd is\n" +
				"smaller still, gzip for old readers, none for the raw size. A row's kind (+I, -U, +U, -D; SQL rows,\n" +
				"and Rows since Flink 1.11) is its group's rowKind field, as jsonl prints {\"rowKind\", \"fields\"}.",
			Flags: []cli.Flag{
				pathMapFlag(),
				&cli.StringFlag{Name: "operator", Usage: "uid:NAME or hash:HEX (the 32-hex-digit operator id); default: every operator"},
				&cli.StringFlag{Name: "state", Usage: "only the state with this name (without --operator: of every operator that has one)"},
				&cli.StringFlag{Name: "format", Value: "jsonl", Usage: "jsonl, csv, table or parquet"},
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "`FILE` (one state) or DIR/ (one file per state) for --format parquet"},
				&cli.StringFlag{Name: "compression", Value: stateparquet.DefaultCodec, Usage: "`CODEC` of --format parquet's pages: snappy, zstd, gzip or none"},
				checkpointFlag(),
				wideFlag(),
				quietFlag(),
			},
			Action: runSavepointDump,
		}
	})
	inspectKeyedStates = keyedStatesForInspect
}

// dumpRecord is one line of output; exactly one of the three is set.
type dumpRecord struct {
	Keyed       *keyed.Record
	Operator    *operatorRecord
	Coordinator *coordinatorRecord // savepoint_dump_coordinator.go
}

type operatorRecord struct {
	State   string `json:"state"`
	Mode    string `json:"mode"`
	Subtask int32  `json:"subtask"`
	Index   int    `json:"index"`
	Key     any    `json:"key,omitempty"`
	Value   any    `json:"value"`
}

func (r dumpRecord) MarshalJSON() ([]byte, error) {
	if r.Keyed != nil {
		return json.Marshal(*r.Keyed)
	}
	if r.Coordinator != nil {
		return json.Marshal(*r.Coordinator)
	}
	if r.Operator.Mode == "broadcast" {
		type bc struct {
			State   string `json:"state"`
			Mode    string `json:"mode"`
			Subtask int32  `json:"subtask"`
			Index   int    `json:"index"`
			Key     any    `json:"key"`
			Value   any    `json:"value"`
		}
		o := r.Operator
		return json.Marshal(bc{o.State, o.Mode, o.Subtask, o.Index, o.Key, o.Value})
	}
	return json.Marshal(*r.Operator)
}

func runSavepointDump(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitFailure, fmt.Errorf("savepoint dump: want exactly one PATH, got %s", english.Count(c.NArg(), "argument")))
	}
	format := c.String("format")
	if format != "jsonl" && format != "csv" && format != "table" && format != "parquet" {
		return withCode(exitFailure, fmt.Errorf("savepoint dump: --format %q: want jsonl, csv, table or parquet", format))
	}
	if (format == "parquet") != (c.String("output") != "") {
		return withCode(exitFailure, fmt.Errorf("savepoint dump: -o FILE|DIR/ goes with --format parquet, and only with it (jsonl, csv and table go to stdout)"))
	}
	if c.IsSet("compression") && format != "parquet" {
		return withCode(exitFailure, fmt.Errorf("savepoint dump: --compression is for --format parquet (jsonl, csv and table are written as they are: pipe them to a compressor)"))
	}
	codec, err := stateparquet.Codec(c.String("compression"))
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("savepoint dump: --%w", err))
	}
	sp, err := openSavepoint(c, c.Args().First())
	if err != nil {
		return withCode(exitFailure, err)
	}
	defer sp.Close()
	if c.Bool("wide") && format != "table" {
		return withCode(exitFailure, fmt.Errorf("savepoint dump: --wide is for --format table; jsonl and csv are never cut"))
	}
	if c.String("operator") == "" {
		if format == "parquet" {
			return withCode(exitFailure, fmt.Errorf("savepoint dump: --format parquet needs --operator (its files are named by state, within one operator)"))
		}
		return dumpAll(c, sp, format)
	}
	op, err := findOperator(sp.Metadata, c.String("operator"))
	if err != nil {
		return withCode(exitFailure, err)
	}
	if format == "parquet" {
		if err := dumpParquet(sp, op, c.String("state"), c.String("output"), codec, func(s string) { fmt.Fprintln(c.App.Writer, s) }); err != nil {
			return withCode(exitFailure, fmt.Errorf("savepoint dump: %w", err))
		}
		return nil
	}
	out := newDumpWriter(tableOut(c), format, false)
	var prog io.Writer
	if !isTerminalWriter(c.App.Writer) {
		prog = progressOut(c)
	}
	pl := newProgressLine(prog, "savepoint dump "+c.String("operator"))
	records := 0
	err = dumpOperator(sp, op, c.String("state"), func(r dumpRecord) error {
		records++
		pl.add(1)
		return out.write(r)
	})
	pl.done()
	if err != nil {
		out.flush()
		return withCode(exitFailure, fmt.Errorf("savepoint dump: %w", err))
	}
	if err := out.flush(); err != nil {
		return withCode(exitFailure, err)
	}
	if records == 0 {
		// Not an error (the savepoint is what it is), but an empty output alone says nothing.
		if names := stateNames(sp, op); len(names) == 0 {
			fmt.Fprintf(c.App.ErrWriter, "statecraft: savepoint dump: operator %s has no state\n", opLabel(op))
		} else {
			fmt.Fprintf(c.App.ErrWriter, "statecraft: savepoint dump: operator %s: no records in %s\n", opLabel(op), orList(names, c.String("state")))
		}
	}
	return nil
}

// dumpAll dumps every operator of the savepoint, in _metadata's order, into one stream whose
// records each name their operator, so one file holds the whole savepoint's state (what
// `savepoint create --like` takes back). --state selects that state in every operator that has
// it; an operator without it is skipped, and a name no operator has is an error.
func dumpAll(c *cli.Context, sp *savepoint.Savepoint, format string) error {
	state := c.String("state")
	out := newDumpWriter(tableOut(c), format, true)
	var prog io.Writer
	if !isTerminalWriter(c.App.Writer) {
		prog = progressOut(c)
	}
	pl := newProgressLine(prog, "savepoint dump")
	records, found := 0, state == ""
	var all []string
	for _, op := range sp.Metadata.Operators {
		names := stateNames(sp, op)
		all = append(all, names...)
		if op.Coordinator != nil {
			names = append(names, coordinatorState)
		}
		if len(names) == 0 || state != "" && !slices.Contains(names, state) {
			// stateNames lists no keyed state whose header it cannot read: skipping such an
			// operator would drop its state without a word.
			if err := keyedReadable(sp, op); err != nil {
				pl.done()
				out.flush()
				return withCode(exitFailure, fmt.Errorf("savepoint dump: operator %s: %w", opLabel(op), err))
			}
			continue
		}
		found = true
		out.op = opLabel(op)
		if err := dumpOperator(sp, op, state, func(r dumpRecord) error {
			records++
			pl.add(1)
			return out.write(r)
		}); err != nil {
			pl.done()
			out.flush()
			return withCode(exitFailure, fmt.Errorf("savepoint dump: operator %s: %w", opLabel(op), err))
		}
	}
	pl.done()
	if err := out.flush(); err != nil {
		return withCode(exitFailure, err)
	}
	if !found {
		slices.Sort(all)
		return withCode(exitFailure, fmt.Errorf("savepoint dump: --state %q: no operator has a state of that name (the savepoint has %s)", state, orNone(slices.Compact(all))))
	}
	if records == 0 {
		fmt.Fprintf(c.App.ErrWriter, "statecraft: savepoint dump: the savepoint holds no records\n")
	}
	return nil
}

// keyedReadable opens the keyed state of op (headers only): the error of a header that cannot be
// read, or nil.
func keyedReadable(sp *savepoint.Savepoint, op *metadata.OperatorState) error {
	_, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err == nil {
		closeAll()
	}
	return err
}

// orNone joins names, or says there are none.
func orNone(names []string) string {
	if len(names) == 0 {
		return "no state"
	}
	return strings.Join(names, ", ")
}

// orList names the state selected, or all of names.
func orList(names []string, state string) string {
	if state != "" {
		return fmt.Sprintf("state %q", state)
	}
	return plural(len(names), "state", "states") + " " + strings.Join(names, ", ")
}

// findOperator resolves --operator uid:NAME or hash:HEX (the selectors migrate takes).
func findOperator(m *metadata.Metadata, sel string) (*metadata.OperatorState, error) {
	s, err := migrate.ParseSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("--operator: %w", err)
	}
	var ids []string
	for _, op := range m.Operators {
		if op.ID == s.ID {
			return op, nil
		}
		ids = append(ids, opLabel(op))
	}
	return nil, fmt.Errorf("--operator %s: no such operator in the savepoint (it has %s)", sel, strings.Join(ids, ", "))
}

func opLabel(op *metadata.OperatorState) string {
	if op.UID != "" {
		return "uid:" + op.UID
	}
	return "hash:" + op.ID.String()
}

// dumpOperator emits the keyed records and timers of every subtask, then the operator-state
// elements, then the coordinator state. state, when not empty, selects one state by name.
func dumpOperator(sp *savepoint.Savepoint, op *metadata.OperatorState, state string, emit func(dumpRecord) error) error {
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		return err
	}
	defer closeAll()
	found := state == ""
	var want func(string) bool
	if state != "" {
		want = func(s string) bool { return s == state }
	}
	for _, s := range subs {
		for _, m := range s.Header.States {
			if m.Name == state {
				found = true
			}
		}
		if err := s.Records(want, func(r keyed.Record) error {
			return emit(dumpRecord{Keyed: &r})
		}); err != nil {
			return err
		}
	}
	has, err := operatorElements(sp, op, state, func(r *operatorRecord) error { return emit(dumpRecord{Operator: r}) })
	if err != nil {
		return err
	}
	found = found || has
	// last, after the splits: the enumerator's view of them (a source's coordinator state)
	has, err = emitCoordinator(sp, op, state, emit)
	if err != nil {
		return err
	}
	found = found || has
	if !found {
		names := stateNames(sp, op)
		if len(names) == 0 {
			return fmt.Errorf("--state %q: operator %s has no state", state, opLabel(op))
		}
		return fmt.Errorf("--state %q: operator %s has no state of that name (it has %s)", state, opLabel(op), strings.Join(names, ", "))
	}
	return nil
}

// operatorElements emits the operator-state elements of every subtask of op (of the state named
// state only, when not empty), and says whether a state of that name exists.
func operatorElements(sp *savepoint.Savepoint, op *metadata.OperatorState, state string, emit func(*operatorRecord) error) (found bool, err error) {
	for _, st := range op.Subtasks {
		if st == nil || st.ManagedOperator == nil {
			continue
		}
		oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle)
		if !ok || oh.Delegate == nil {
			continue
		}
		has := state == ""
		for _, s := range oh.States {
			if s.Name == state {
				has, found = true, true
			}
		}
		if !has {
			continue
		}
		str, err := sp.OpenStream(oh.Delegate)
		if err != nil {
			return found, fmt.Errorf("operator %s subtask %d operator state: %w", op.ID, st.Index, err)
		}
		os, err := opstate.Open(str, str.Size(), str.Name, oh)
		if err != nil {
			str.Close()
			return found, err
		}
		idx := st.Index
		err = os.Read(func(e opstate.Element) error {
			if state != "" && e.State != state {
				return nil
			}
			return emit(&operatorRecord{State: e.State, Mode: e.Mode, Subtask: idx, Index: e.Index, Key: e.Key, Value: sourceElementValue(e)})
		})
		str.Close()
		if err != nil {
			return found, err
		}
	}
	return found, nil
}

// stateNames lists the keyed states (timers included) and operator states of op, each once, in
// the order the savepoint stores them. It reads only the keyed state headers.
func stateNames(sp *savepoint.Savepoint, op *metadata.OperatorState) []string {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if subs, closeAll, err := keyed.OpenSubtasks(sp, op); err == nil {
		for _, s := range subs {
			for _, m := range s.Header.States {
				add(m.Name)
			}
		}
		closeAll()
	}
	for _, st := range op.Subtasks {
		if st == nil {
			continue
		}
		if oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle); ok {
			for _, s := range oh.States {
				add(s.Name)
			}
		}
	}
	return names
}

// dumpWriter formats records as JSON lines, CSV or an aligned table.
type dumpWriter struct {
	format string
	bw     *bufio.Writer // jsonl: one write(2) per 64 KiB, not per record
	buf    []byte        // jsonl: the record being encoded, reused
	enc    *json.Encoder
	csv    *csv.Writer
	tab    *fittable.Writer
	header bool
	rows   [][]string // table only: kept until flush, so columns that stay empty can be left out
	err    error
	// withOp: every record names its operator (a dump of all operators), op is the current one.
	withOp bool
	op     string
}

var dumpColumns = []string{"state", "subtask", "keyGroup", "key", "namespace", "userKey", "value", "ttlTimestamp", "kind", "timestamp", "mode", "index"}

func newDumpWriter(w io.Writer, format string, withOp bool) *dumpWriter {
	d := &dumpWriter{format: format, withOp: withOp}
	switch format {
	case "jsonl":
		d.bw = bufio.NewWriterSize(w, 64<<10)
		d.enc = json.NewEncoder(d.bw)
		d.enc.SetEscapeHTML(false)
	case "csv":
		d.csv = csv.NewWriter(w)
	case "table":
		d.tab = newTable(w, fittable.Column{Header: "operator", Elide: true}, fittable.Column{Header: "state", Elide: true}, fittable.Column{Header: "key", Elide: true},
			fittable.Column{Header: "namespace", Elide: true}, fittable.Column{Header: "userKey", Elide: true},
			fittable.Column{Header: "value", Elide: true, MinWidth: 16}, fittable.Column{Header: "subtask", Drop: 1},
			fittable.Column{Header: "keyGroup", Short: "kg"})
	}
	return d
}

// cell renders a value for CSV and table output: strings as they are, everything else as JSON.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	// The same bytes as json.Marshal(v), without reflection; on error, json.Marshal's wording.
	b, err := keyed.AppendJSONValue(nil, v)
	if err != nil {
		_, err = json.Marshal(v)
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}

// row is the record's cells under dumpColumns, with the operator's in front when records name
// their operator.
func (d *dumpWriter) row(r dumpRecord) []string {
	row := d.cells(r)
	if d.withOp {
		row = append([]string{d.op}, row...)
	}
	return row
}

// columns are the CSV and table columns.
func (d *dumpWriter) columns() []string {
	if d.withOp {
		return append([]string{"operator"}, dumpColumns...)
	}
	return dumpColumns
}

func (d *dumpWriter) cells(r dumpRecord) []string {
	row := make([]string, len(dumpColumns))
	if k := r.Keyed; k != nil {
		row[0], row[2] = k.State, strconv.Itoa(k.KeyGroup)
		row[3], row[4] = cell(k.Key), cell(k.Namespace)
		if k.Kind == "timer" {
			row[8], row[9] = k.TimerKind, strconv.FormatInt(k.Timestamp, 10)
		} else {
			row[5], row[6], row[7] = cell(k.UserKey), cell(k.Value), cell(k.TTL)
			row[8] = k.Kind
		}
		return row
	}
	if c := r.Coordinator; c != nil {
		row[0], row[6], row[10] = c.State, cell(c.Value), c.Mode
		return row
	}
	o := r.Operator
	row[0], row[1] = o.State, strconv.Itoa(int(o.Subtask))
	row[3], row[6], row[10], row[11] = cell(o.Key), cell(o.Value), o.Mode, strconv.Itoa(o.Index)
	return row
}

func (d *dumpWriter) write(r dumpRecord) error {
	if d.err != nil {
		return d.err
	}
	switch d.format {
	case "jsonl":
		d.err = d.writeJSON(r)
	case "csv":
		if !d.header {
			d.header = true
			d.csv.Write(d.columns())
		}
		d.err = d.csv.Write(d.row(r))
	case "table":
		d.rows = append(d.rows, d.row(r))
	}
	return d.err
}

// writeTable prints the buffered rows with only the columns that hold a value in some row, so a
// dump of one value state is not padded with the columns of timers and operator state.
func (d *dumpWriter) writeTable() {
	var keep []int
	cols := d.columns()
	for c := range cols {
		for _, r := range d.rows {
			if r[c] != "" {
				keep = append(keep, c)
				break
			}
		}
	}
	line := func(cells []string) {
		out := make([]string, len(keep))
		for i, c := range keep {
			out[i] = cells[c]
		}
		fmt.Fprintln(d.tab, strings.Join(out, "\t"))
	}
	line(cols)
	for _, r := range d.rows {
		line(r)
	}
}

// writeJSON prints a keyed record with keyed.Record.AppendJSON, which writes the bytes the
// json.Encoder would (its tests compare the two on every fixture record) at a fraction of the
// cost; operator-state records, few and rarely dumped in bulk, keep the encoder. A record
// AppendJSON refuses goes through the encoder too, so the error is the encoder's.
func (d *dumpWriter) writeJSON(r dumpRecord) error {
	var b []byte
	var err error
	if r.Keyed != nil {
		b, err = r.Keyed.AppendJSON(d.buf[:0])
	}
	if r.Keyed == nil || err != nil {
		if !d.withOp {
			return d.enc.Encode(r)
		}
		// The encoder's bytes (HTML not escaped, as without --operator), newline dropped.
		var jb bytes.Buffer
		enc := json.NewEncoder(&jb)
		enc.SetEscapeHTML(false)
		if err = enc.Encode(r); err != nil {
			return err
		}
		b = bytes.TrimSuffix(jb.Bytes(), []byte("\n"))
	}
	if d.withOp {
		// {"operator":"uid:NAME", then the record's own fields: the operator comes first so
		// that a reader (create --like) knows where a record goes before reading its values.
		head := append(append([]byte(`{"operator":`), mustJSONString(d.op)...), ',')
		b = append(head, b[1:]...)
	}
	d.buf = append(b, '\n')
	_, err = d.bw.Write(d.buf)
	return err
}

// mustJSONString quotes s as JSON (a string always encodes).
func mustJSONString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func (d *dumpWriter) flush() error {
	switch d.format {
	case "jsonl":
		// Flushed on error too: the records printed before the failure still reach the output.
		if err := d.bw.Flush(); d.err == nil {
			d.err = err
		}
	case "csv":
		d.csv.Flush()
		if d.err == nil {
			d.err = d.csv.Error()
		}
	case "table":
		if d.err == nil && len(d.rows) > 0 {
			d.writeTable()
		}
		if err := d.tab.Flush(); d.err == nil {
			d.err = err
		}
	}
	return d.err
}

// keyedStatesForInspect lists the keyed states of op from the keyed-state headers of its
// subtasks (every subtask's header names the same states).
func keyedStatesForInspect(sp *savepoint.Savepoint, op *metadata.OperatorState) ([]inspectState, string, error) {
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		return nil, "", err
	}
	defer closeAll()
	seen := map[string]bool{}
	var out []inspectState
	for _, s := range subs {
		for _, sd := range s.Decoder.States {
			m := sd.Meta
			if seen[m.Name] {
				continue
			}
			seen[m.Name] = true
			st := inspectState{Name: m.Name, Kind: sd.Kind, KeyType: serializer.JavaType(s.Header.KeySerializer), TTL: sd.TTL}
			if sd.Kind == "timer" {
				st.Kind = "timer:" + sd.TimerKind
			} else {
				uk, vs, isMap, _ := m.EntrySerializers()
				st.ValueType = serializer.JavaType(vs)
				if isMap {
					st.UserKeyType = serializer.JavaType(uk)
				}
			}
			out = append(out, st)
		}
	}
	return out, "", nil
}

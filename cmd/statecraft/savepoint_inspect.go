package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/internal/fittable"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/sourcestate"
	"github.com/urfave/cli/v2"
)

// inspectState is one state of an operator as `savepoint inspect` lists it.
type inspectState struct {
	Name string `json:"name"`
	// Kind is value, list, map, reducing or aggregating for keyed state (from the keyed-state
	// header), and split, union or broadcast for operator state (from _metadata itself).
	Kind        string `json:"kind"`
	KeyType     string `json:"keyType,omitempty"`
	ValueType   string `json:"valueType,omitempty"`
	UserKeyType string `json:"userKeyType,omitempty"`
	TTL         bool   `json:"ttl,omitempty"`
	Raw         bool   `json:"raw,omitempty"` // raw (not managed) operator state
}

// inspectKeyedStates, when set (by the keyed-state reader's command file, in its init), lists the
// keyed states of an operator with their kinds and types from the serializer snapshots in the
// keyed-state header, plus the backend that wrote them ("hashmap", "rocksdb"; "" if unknown).
// Without it, inspect lists operator state only, which _metadata alone describes.
var inspectKeyedStates func(sp *savepoint.Savepoint, op *metadata.OperatorState) (states []inspectState, backend string, err error)

// inspectOperator is one operator in `savepoint inspect --json`: the savepoint_metadata row plus
// what statecraft can say about its states.
type inspectOperator struct {
	savepoint.MetadataRow
	Backend    string         `json:"backend,omitempty"`
	States     []inspectState `json:"states"`
	StateError string         `json:"stateError,omitempty"`
	// Subtasks lists each subtask record's handles (only with --subtasks).
	Subtasks []inspectSubtask `json:"subtasks,omitempty"`
	// Source is a source operator's splits and enumerator, decoded as savepoint offsets does.
	Source *offsetsSource `json:"source,omitempty"`
}

type inspectOutput struct {
	Savepoint       string `json:"savepoint"`
	MetadataVersion int32  `json:"metadataVersion"`
	CheckpointID    int64  `json:"checkpointId"`
	Format          string `json:"format"` // canonical, native, changelog
	FormatNote      string `json:"formatNote,omitempty"`
	// From the CheckpointProperties at the end of _metadata (V4+): savepoint or checkpoint,
	// Flink's name for the snapshot type ("Savepoint", "Suspend Savepoint", "Checkpoint", ...)
	// and, for savepoints, the format type Flink was asked for (CANONICAL, NATIVE).
	Kind                string            `json:"kind,omitempty"`
	SnapshotType        string            `json:"snapshotType,omitempty"`
	SavepointFormatType string            `json:"savepointFormatType,omitempty"`
	PropertiesError     string            `json:"propertiesError,omitempty"`
	Operators           []inspectOperator `json:"operators"`
}

func init() {
	register([]string{"savepoint"}, func() *cli.Command {
		return &cli.Command{
			Name:      "inspect",
			Usage:     "list the operators of a savepoint or checkpoint with the columns of Flink's savepoint_metadata()",
			ArgsUsage: "PATH (a savepoint/checkpoint directory or its _metadata file)",
			Description: "One row per operator: checkpoint-id, operator-name, operator-uid, operator-uid-hash,\n" +
				"operator-parallelism, operator-max-parallelism, operator-subtask-state-count,\n" +
				"operator-coordinator-state-size-in-bytes, operator-total-size-in-bytes (the values Flink's\n" +
				"savepoint_metadata SQL function reports), then each operator's states.",
			Flags: []cli.Flag{
				pathMapFlag(),
				&cli.BoolFlag{Name: "json", Usage: "print JSON"},
				&cli.BoolFlag{Name: "csv", Usage: "print the savepoint_metadata rows as CSV"},
				&cli.BoolFlag{Name: "subtasks", Usage: "also list every subtask's state handles: kind, key-group range, file, size"},
				checkpointFlag(),
				wideFlag(),
			},
			Action: runSavepointInspect,
		}
	})
}

func runSavepointInspect(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitFailure, fmt.Errorf("savepoint inspect: want exactly one PATH (a savepoint directory or its _metadata file), got %s", english.Count(c.NArg(), "argument")))
	}
	if c.Bool("json") && c.Bool("csv") {
		return withCode(exitFailure, fmt.Errorf("savepoint inspect: --json and --csv exclude each other"))
	}
	if c.Bool("csv") && c.Bool("subtasks") {
		return withCode(exitFailure, fmt.Errorf("savepoint inspect: --csv prints the savepoint_metadata rows only; use --subtasks with the table or --json"))
	}
	opt, err := savepointOptions(c)
	if err != nil {
		return err
	}
	path, err := snapshotPath(c, c.Args().First())
	if err != nil {
		return err
	}
	out, err := loadInspect(path, c.Bool("subtasks"), opt)
	if err != nil {
		return withCode(exitFailure, err)
	}
	w := c.App.Writer
	switch {
	case c.Bool("json") && c.Bool("wide"), c.Bool("csv") && c.Bool("wide"):
		err = fmt.Errorf("savepoint inspect: --wide is for the table; --json and --csv are never cut")
	case c.Bool("json"):
		err = writeInspectJSON(w, out)
	case c.Bool("csv"):
		err = writeInspectCSV(w, out)
	default:
		w = tableOut(c)
		err = writeInspectText(w, out)
		if err == nil && c.Bool("subtasks") {
			err = writeSubtasksText(w, out)
		}
	}
	if err != nil {
		return withCode(exitFailure, err)
	}
	if out.FormatNote != "" && !c.Bool("json") {
		fmt.Fprintf(c.App.ErrWriter, "statecraft: note: %s\n", out.FormatNote)
	}
	// The rows come from _metadata and stay worth printing, but a state file that cannot be read
	// is damage a script must not miss: exit 1 naming the first one.
	for _, op := range out.Operators {
		if op.StateError != "" {
			who := op.OperatorUIDHash
			if op.OperatorUID != nil {
				who = "uid " + *op.OperatorUID
			}
			return withCode(exitFailure, fmt.Errorf("savepoint inspect: operator %s: state cannot be read: %s", who, op.StateError))
		}
	}
	return nil
}

// loadInspect opens the savepoint at path and gathers what inspect prints.
func loadInspect(path string, subtasks bool, opt savepoint.Options) (*inspectOutput, error) {
	// Decoding a wide savepoint makes 100,000s of small objects that all live until the end;
	// collecting garbage less often saves a fifth of the time and costs memory only in
	// proportion to the _metadata file.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	sp, err := savepoint.OpenWith(context.Background(), path, opt)
	if err != nil {
		return nil, err
	}
	defer sp.Close()
	out := inspect(sp)
	if subtasks {
		for i, op := range sp.Metadata.Operators {
			out.Operators[i].Subtasks = subtaskDetails(op)
		}
	}
	return out, nil
}

// inspect gathers everything inspect prints.
func inspect(sp *savepoint.Savepoint) *inspectOutput {
	m := sp.Metadata
	out := &inspectOutput{
		Savepoint:       sp.Dir,
		MetadataVersion: m.Version,
		CheckpointID:    m.CheckpointID,
		Format:          sp.Format().String(),
		Operators:       make([]inspectOperator, 0, len(m.Operators)),
	}
	if p, err := m.ParseProperties(sp.MetadataPath); err != nil {
		out.PropertiesError = err.Error()
	} else if p != nil {
		out.Kind = "checkpoint"
		if p.IsSavepoint() {
			out.Kind = "savepoint"
		}
		out.SnapshotType, out.SavepointFormatType = p.Name, p.FormatType
	}
	readable := sp.CheckReadable()
	if readable != nil {
		out.FormatNote = readable.Error()
	}
	for _, op := range m.Operators {
		out.Operators = append(out.Operators, inspectOperator{MetadataRow: savepoint.Row(m.CheckpointID, op), States: operatorStates(op)})
	}
	if inspectKeyedStates != nil && readable == nil {
		addKeyedStates(sp, out.Operators)
	}
	checkStateFiles(sp, out.Operators)
	if readable == nil {
		addSources(sp, out.Operators)
	}
	return out
}

// addSources decodes the state of every source operator (splits, enumerator) as savepoint
// offsets does; one that cannot be read becomes the operator's state error, unless it has one.
func addSources(sp *savepoint.Savepoint, rows []inspectOperator) {
	for i, op := range sp.Metadata.Operators {
		if !sourcestate.IsSource(op) && !sourcestate.IsLegacyKafka(op) || rows[i].StateError != "" {
			continue
		}
		o, err := readOffsets(sp, op)
		if err != nil {
			rows[i].StateError = err.Error()
			continue
		}
		rows[i].Source = &o
	}
}

// checkStateFiles opens every state file the operators' subtasks point at (each distinct file
// once): OpenStream refuses a missing file, one of another size than _metadata records, and one
// outside the directory. Headers are read for one subtask per operator only, so without this a
// damaged file of another subtask would go unnoticed. The first problem becomes the operator's
// state error, unless it already has one.
func checkStateFiles(sp *savepoint.Savepoint, rows []inspectOperator) {
	checked := map[streamID]error{}
	for i, op := range sp.Metadata.Operators {
		if rows[i].StateError != "" {
			continue
		}
	subtasks:
		for _, st := range op.Subtasks {
			var buf [4]metadata.StreamHandle
			streams := buf[:0]
			for _, h := range [...]metadata.KeyedHandle{st.ManagedKeyed, st.RawKeyed} {
				if kh, ok := h.(*metadata.KeyGroupsHandle); ok {
					streams = append(streams, kh.Delegate)
				}
			}
			for _, h := range [...]metadata.OperatorHandle{st.ManagedOperator, st.RawOperator} {
				if oh, ok := h.(*metadata.OperatorStreamHandle); ok {
					streams = append(streams, oh.Delegate)
				}
			}
			for _, h := range streams {
				if h == nil {
					continue
				}
				if _, inline := h.(*metadata.ByteStreamHandle); inline {
					continue
				}
				key, isFile := streamKey(h)
				err, done := checked[key]
				if !isFile || !done {
					var s *savepoint.Stream
					if s, err = sp.OpenStream(h); err == nil {
						s.Close()
					}
					if isFile {
						checked[key] = err
					}
				}
				if err != nil {
					rows[i].StateError = fmt.Sprintf("subtask %d: %v", st.Index, err)
					break subtasks
				}
			}
		}
	}
}

// streamID names the bytes a file stream handle points at, for checking each file once. It is
// comparable and built without allocating: wide savepoints have 100,000s of handles.
type streamID struct {
	tag  byte
	path string
	size int64
}

func streamKey(h metadata.StreamHandle) (streamID, bool) {
	switch h := h.(type) {
	case *metadata.RelativeFileHandle:
		return streamID{h.Tag(), h.Path, h.Size}, true
	case *metadata.FileHandle:
		return streamID{h.Tag(), h.Path, h.Size}, true
	}
	return streamID{}, false
}

// addKeyedStates asks the keyed-state reader for each operator's keyed states, reading one
// subtask's header per operator, several operators at a time (each header is a file read).
//
// Operators whose sampled subtask points at the same state file (and the same max parallelism)
// share one header read: the state list comes from the header alone. Only successful reads are
// shared, since errors name the operator.
func addKeyedStates(sp *savepoint.Savepoint, rows []inspectOperator) {
	type listing struct {
		states  []inspectState
		backend string
	}
	var mu sync.Mutex
	seen := map[headerID]listing{}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				op := sp.Metadata.Operators[i]
				first := firstKeyedSubtask(op)
				// Every subtask of an operator registers the same states when the job registers
				// them in open(), as is usual; reading one header per operator keeps inspect fast
				// on wide jobs (1,000 operators of parallelism 128 would be 128,000 file reads).
				key, share := headerKey(op, first)
				mu.Lock()
				l, ok := seen[key]
				mu.Unlock()
				ok = ok && share
				ks, backend := slices.Clone(l.states), l.backend
				if !ok {
					sample := *op
					sample.Subtasks = []*metadata.SubtaskState{first}
					var err error
					ks, backend, err = keyedStatesSafely(sp, &sample)
					if err != nil {
						rows[i].StateError = err.Error()
					} else if share {
						mu.Lock()
						seen[key] = listing{slices.Clone(ks), backend}
						mu.Unlock()
					}
				}
				rows[i].Backend = backend
				rows[i].States = append(ks, rows[i].States...)
			}
		}()
	}
	for i, op := range sp.Metadata.Operators {
		if firstKeyedSubtask(op) != nil {
			jobs <- i
		}
	}
	close(jobs)
	wg.Wait()
}

// headerKey names the keyed-state header st's handle reads, for sharing its state list between
// operators: the state file and its size, and the max parallelism (key-group prefix width). Only
// savepoint key-groups handles on files qualify (other tags add a layout check that depends on
// the offsets); false means do not share. The file part is checkStateFiles' streamID.
func headerKey(op *metadata.OperatorState, st *metadata.SubtaskState) (headerID, bool) {
	kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
	if !ok || kh.Tag() != metadata.TagSavepointKeyGroups {
		return headerID{}, false
	}
	file, ok := streamKey(kh.Delegate)
	return headerID{file, op.MaxParallelism}, ok
}

// headerID is what headerKey names: a state file and the max parallelism it is read with.
type headerID struct {
	file           streamID
	maxParallelism int32
}

// keyedStatesSafely calls the keyed-state reader; a panic in it (a bug: readers must return
// errors on bad input) becomes this operator's state error instead of ending the command, so the
// savepoint_metadata rows are still printed.
func keyedStatesSafely(sp *savepoint.Savepoint, op *metadata.OperatorState) (states []inspectState, backend string, err error) {
	defer func() {
		if p := recover(); p != nil {
			states, backend, err = nil, "", fmt.Errorf("internal error reading the keyed-state header (please report): %v", p)
		}
	}()
	return inspectKeyedStates(sp, op)
}

// firstKeyedSubtask is the first subtask record with managed keyed state, or nil.
func firstKeyedSubtask(op *metadata.OperatorState) *metadata.SubtaskState {
	for _, st := range op.Subtasks {
		if !st.Finished && st.ManagedKeyed != nil {
			return st
		}
	}
	return nil
}

// operatorStates lists the operator (non-keyed) states named in the operator's handles, sorted by
// name: every subtask's handle names the same states, so the union is taken.
func operatorStates(op *metadata.OperatorState) []inspectState {
	seen := map[string]bool{}
	var out []inspectState
	for _, st := range op.Subtasks {
		for i, h := range []metadata.OperatorHandle{st.ManagedOperator, st.RawOperator} {
			oh, ok := h.(*metadata.OperatorStreamHandle)
			if !ok {
				continue
			}
			for _, s := range oh.States {
				key := strconv.Itoa(i) + "/" + s.Name
				if seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, inspectState{Name: s.Name, Kind: metadata.ModeName(s.Mode), Raw: i == 1})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Raw != out[j].Raw {
			return !out[i].Raw
		}
		return out[i].Name < out[j].Name
	})
	if out == nil {
		out = []inspectState{}
	}
	return out
}

func writeInspectJSON(w io.Writer, out *inspectOutput) error {
	return encodeJSON(w, out)
}

// rowFields renders a savepoint_metadata row as text; NULL is empty in CSV and "-" in tables.
func rowFields(r savepoint.MetadataRow, null string) []string {
	str := func(p *string) string {
		if p == nil {
			return null
		}
		return *p
	}
	return []string{
		strconv.FormatInt(r.CheckpointID, 10), str(r.OperatorName), str(r.OperatorUID), r.OperatorUIDHash,
		strconv.Itoa(int(r.Parallelism)), strconv.Itoa(int(r.MaxParallelism)), strconv.Itoa(r.SubtaskStateCount),
		strconv.FormatInt(r.CoordinatorStateSizeInBytes, 10), strconv.FormatInt(r.TotalSizeInBytes, 10),
	}
}

func writeInspectCSV(w io.Writer, out *inspectOutput) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(savepoint.MetadataColumns); err != nil {
		return err
	}
	for _, op := range out.Operators {
		if err := cw.Write(rowFields(op.MetadataRow, "")); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeInspectText(w io.Writer, out *inspectOutput) error {
	tx := newTextWriter(w) // the header lines, wrapped to the width the tables fit
	fmt.Fprintf(tx, "savepoint:  %s\n", out.Savepoint)
	fmt.Fprintf(tx, "metadata:   version %d, checkpoint %d, %s, format %s\n", out.MetadataVersion, out.CheckpointID, english.Count(len(out.Operators), "operator"), out.Format)
	switch {
	case out.SnapshotType != "" && out.SavepointFormatType != "":
		fmt.Fprintf(tx, "snapshot:   %s (%s)\n", out.SnapshotType, out.SavepointFormatType)
	case out.SnapshotType != "":
		fmt.Fprintf(tx, "snapshot:   %s\n", out.SnapshotType)
	case out.PropertiesError != "":
		fmt.Fprintf(tx, "snapshot:   unknown (%s)\n", out.PropertiesError)
	}
	fmt.Fprintln(tx)
	tw := newTable(w, inspectColumns...)
	for i, c := range savepoint.MetadataColumns {
		if i > 0 {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprint(tw, c)
	}
	fmt.Fprintln(tw)
	var line []byte
	for _, op := range out.Operators {
		line = line[:0]
		for i, f := range rowFields(op.MetadataRow, "-") {
			if i > 0 {
				line = append(line, '\t')
			}
			line = append(line, f...)
		}
		line = append(line, '\n')
		tw.Write(line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	any := false
	for _, op := range out.Operators {
		if len(op.States) > 0 || op.StateError != "" {
			any = true
			break
		}
	}
	if !any {
		return nil
	}
	fmt.Fprintln(w, "\nstates:")
	tw = newTable(w, fittable.Column{Header: "operator", Elide: true}, fittable.Column{Header: "state", Elide: true},
		fittable.Column{Header: "key type", Elide: true}, fittable.Column{Header: "value type", Elide: true})
	// No backend column: the canonical format is the same for hashmap and RocksDB and records
	// neither, so the states are listed by what the headers do say.
	fmt.Fprintln(tw, "operator\tstate\tkind\tkey type\tvalue type\tttl")
	for _, op := range out.Operators {
		who := op.OperatorUIDHash
		if op.OperatorUID != nil {
			who = *op.OperatorUID
		}
		for _, s := range op.States {
			kind := s.Kind
			if s.Raw {
				kind += " (raw)"
			}
			vt := s.ValueType
			if s.UserKeyType != "" {
				vt = s.UserKeyType + " -> " + s.ValueType
			}
			ttl := "no"
			if s.TTL {
				ttl = "yes"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", who, s.Name, kind, orDash(s.KeyType), orDash(vt), ttl)
		}
		if op.StateError != "" {
			fmt.Fprintf(tw, "%s\t(error: %s)\t\t\t\t\n", who, op.StateError)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var sources []offsetsSource
	for _, op := range out.Operators {
		if op.Source != nil {
			sources = append(sources, *op.Source)
		}
	}
	if len(sources) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nsources:")
	return offsetsTable(w, sources)
}

// inspectColumns says how the savepoint_metadata table gives way on a narrow terminal: Flink's
// long column names become short ones, the coordinator size, checkpoint id (in the header
// already) and subtask count are hidden first, names and UIDs are elided.
var inspectColumns = []fittable.Column{
	{Header: "checkpoint-id", Short: "ckpt", Drop: 3},
	{Header: "operator-name", Short: "name", Elide: true},
	{Header: "operator-uid", Short: "uid", Elide: true},
	{Header: "operator-uid-hash", Short: "uid hash", Drop: 1},
	{Header: "operator-parallelism", Short: "par"},
	{Header: "operator-max-parallelism", Short: "max par"},
	{Header: "operator-subtask-state-count", Short: "subtasks", Drop: 2},
	{Header: "operator-coordinator-state-size-in-bytes", Short: "coord bytes", Drop: 4},
	{Header: "operator-total-size-in-bytes", Short: "bytes"},
}

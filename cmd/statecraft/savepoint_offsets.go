package main

import (
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/internal/fittable"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/opstate"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/sourcestate"
)

func init() {
	register([]string{"savepoint"}, func() *cli.Command {
		return &cli.Command{
			Name:      "offsets",
			Usage:     "list the positions of every FLIP-27 source: one row per reader split (Kafka topic, partition, offsets), then the enumerator's view",
			ArgsUsage: "PATH (a savepoint directory or its _metadata file)",
			Description: "Starting offsets are numbers or Kafka's markers (earliest, latest, committed, migrated);\n" +
				"a stopping offset of none means unbounded. Splits of other connectors are listed with their\n" +
				"serializer version and base64 bytes.",
			Flags: []cli.Flag{
				pathMapFlag(),
				&cli.StringFlag{Name: "operator", Usage: "only this source: uid:NAME or hash:HEX"},
				&cli.BoolFlag{Name: "json", Usage: "print JSON"},
				&cli.BoolFlag{Name: "csv", Usage: "print the split rows as CSV"},
				checkpointFlag(),
				wideFlag(),
			},
			Action: runSavepointOffsets,
		}
	})
}

// offsetsSource is one source operator in the --json output.
type offsetsSource struct {
	Operator   string            `json:"operator"` // uid:NAME or hash:HEX
	UID        string            `json:"uid,omitempty"`
	Hash       string            `json:"hash"`
	Name       string            `json:"name,omitempty"`
	Connector  string            `json:"connector"`
	Splits     []offsetsSplit    `json:"splits"`
	Enumerator *offsetsEnumState `json:"enumerator,omitempty"`
}

type offsetsSplit struct {
	Subtask           int32        `json:"subtask"`
	Index             int          `json:"index"`
	SerializerVersion int32        `json:"serializerVersion"`
	Topic             string       `json:"topic,omitempty"`
	Partition         *int32       `json:"partition,omitempty"`
	StartingOffset    *int64       `json:"startingOffset,omitempty"`
	Starting          string       `json:"starting,omitempty"`
	StoppingOffset    *int64       `json:"stoppingOffset,omitempty"`
	Stopping          string       `json:"stopping,omitempty"`
	Base64            string       `json:"base64,omitempty"` // splits not decoded
	Note              string       `json:"note,omitempty"`   // why not
	File              *offsetsFile `json:"file,omitempty"`   // a FileSource split
}

// offsetsFile is a FileSource split: a region of a file and where the reader stands in it.
type offsetsFile struct {
	ID                 string   `json:"id"`
	Path               string   `json:"path"`
	Offset             int64    `json:"offset"`
	Length             int64    `json:"length"`
	ModificationTime   int64    `json:"fileModificationTime"`
	FileSize           int64    `json:"fileSize"`
	Hostnames          []string `json:"hostnames"`
	PositionOffset     *int64   `json:"positionOffset,omitempty"`     // reader position: byte offset (-1: none)
	RecordsAfterOffset *int64   `json:"recordsAfterOffset,omitempty"` // and records to skip after it
}

func fileView(f *sourcestate.FileSplit) *offsetsFile {
	v := &offsetsFile{ID: f.ID, Path: f.Path, Offset: f.Offset, Length: f.Length, ModificationTime: f.ModificationTime,
		FileSize: f.FileSize, Hostnames: append([]string{}, f.Hostnames...)}
	if p := f.Position; p != nil {
		o, n := p.Offset, p.RecordsAfterOffset
		v.PositionOffset, v.RecordsAfterOffset = &o, &n
	}
	return v
}

// positionText says where a FileSource reader resumes in its split.
func (f *offsetsFile) positionText() string {
	switch {
	case f.PositionOffset == nil:
		return "split start"
	case *f.PositionOffset < 0:
		return fmt.Sprintf("after %d records", *f.RecordsAfterOffset)
	}
	return fmt.Sprintf("byte %d + %d records", *f.PositionOffset, *f.RecordsAfterOffset)
}

type offsetsEnumState struct {
	CoordinatorSerdeVersion  int32               `json:"coordinatorSerdeVersion"`
	SerializerVersion        int32               `json:"serializerVersion"`
	TrailingBytes            int                 `json:"trailingBytes,omitempty"`  // serde 0: reader assignments after the checkpoint, skipped by Flink
	PendingFiles             []*offsetsFile      `json:"pendingFiles,omitempty"`   // FileSource
	ProcessedPaths           []string            `json:"processedPaths,omitempty"` // FileSource
	InitialDiscoveryFinished *bool               `json:"initialDiscoveryFinished,omitempty"`
	Partitions               []offsetsEnumSplit  `json:"partitions,omitempty"`
	Base64                   string              `json:"base64,omitempty"`
	Note                     string              `json:"note,omitempty"`
	byStatus                 map[string][]string // table output
}

type offsetsEnumSplit struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Status    string `json:"status"`
	Subtask   *int32 `json:"subtask,omitempty"` // enumerator state version 0 only
	Starting  string `json:"starting"`
	Stopping  string `json:"stopping"`
}

func runSavepointOffsets(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitFailure, fmt.Errorf("savepoint offsets: want exactly one PATH, got %d arguments", c.NArg()))
	}
	if c.Bool("json") && c.Bool("csv") {
		return withCode(exitFailure, fmt.Errorf("savepoint offsets: --json and --csv exclude each other"))
	}
	sp, err := openSavepoint(c, c.Args().First())
	if err != nil {
		return withCode(exitFailure, err)
	}
	defer sp.Close()
	ops := sp.Metadata.Operators
	if sel := c.String("operator"); sel != "" {
		op, err := findOperator(sp.Metadata, sel)
		if err != nil {
			return withCode(exitFailure, err)
		}
		if !sourcestate.IsSource(op) && op.Coordinator == nil && !sourcestate.IsLegacyKafka(op) {
			return withCode(exitFailure, fmt.Errorf("--operator %s: not a source (no %s state and no coordinator state)", sel, sourcestate.ReaderStateName))
		}
		ops = []*metadata.OperatorState{op}
	}
	var out []offsetsSource
	for _, op := range ops {
		if !sourcestate.IsSource(op) && !sourcestate.IsLegacyKafka(op) && (c.String("operator") == "" || op.Coordinator == nil) {
			continue
		}
		o, err := readOffsets(sp, op)
		if err != nil {
			return withCode(exitFailure, err)
		}
		out = append(out, o)
	}
	w := c.App.Writer
	switch {
	case c.Bool("json"):
		if out == nil {
			out = []offsetsSource{}
		}
		err = encodeJSON(w, map[string]any{"sources": out})
	case c.Bool("csv"):
		err = offsetsCSV(w, out)
	default:
		err = offsetsTable(tableOut(c), out)
	}
	if err != nil {
		return withCode(exitFailure, err)
	}
	return nil
}

// readOffsets reads the source state of op: a legacy FlinkKafkaConsumer's union state, or a
// FLIP-27 source's splits and enumerator.
func readOffsets(sp *savepoint.Savepoint, op *metadata.OperatorState) (offsetsSource, error) {
	if sourcestate.IsLegacyKafka(op) && !sourcestate.IsSource(op) {
		offs, err := sourcestate.ReadLegacyKafka(sp, op)
		if err != nil {
			return offsetsSource{}, err
		}
		return describeLegacy(op, offs), nil
	}
	src, err := sourcestate.Read(sp, op)
	if err != nil {
		return offsetsSource{}, err
	}
	return describeSource(src), nil
}

func describeSource(src *sourcestate.Source) offsetsSource {
	op := src.Operator
	o := offsetsSource{Operator: opLabel(op), UID: op.UID, Hash: op.ID.String(), Name: op.Name, Connector: src.Connector, Splits: []offsetsSplit{}}
	for _, s := range src.Splits {
		row := offsetsSplit{Subtask: s.Subtask, Index: s.Index, SerializerVersion: s.Raw.Version}
		if k := s.Kafka; k != nil {
			p, start, stop := k.Partition, k.StartingOffset, k.StoppingOffset
			row.Topic, row.Partition, row.StartingOffset, row.StoppingOffset = k.Topic, &p, &start, &stop
			row.Starting, row.Stopping = sourcestate.StartingText(start), sourcestate.StoppingText(stop)
		} else if f := s.File; f != nil {
			row.File = fileView(f)
			row.Starting = row.File.positionText()
		} else {
			row.Base64 = base64.StdEncoding.EncodeToString(s.Raw.Payload)
			if s.Err != nil && isKafkaLike(src) {
				row.Note = s.Err.Error()
			}
		}
		o.Splits = append(o.Splits, row)
	}
	if c := src.Coordinator; c != nil {
		e := &offsetsEnumState{CoordinatorSerdeVersion: c.SerdeVersion, SerializerVersion: c.Enum.Version, TrailingBytes: len(c.Trailing), byStatus: map[string][]string{}}
		if k := src.KafkaEnum; k != nil {
			done := k.InitialDiscoveryFinished
			e.InitialDiscoveryFinished = &done
			for _, p := range k.Partitions {
				ep := offsetsEnumSplit{Topic: p.Split.Topic, Partition: p.Split.Partition, Status: p.Status.String(),
					Starting: sourcestate.StartingText(p.Split.StartingOffset), Stopping: sourcestate.StoppingText(p.Split.StoppingOffset)}
				if k.Version == sourcestate.KafkaEnumV0 {
					sub := p.Subtask
					ep.Subtask = &sub
				}
				e.Partitions = append(e.Partitions, ep)
				e.byStatus[ep.Status] = append(e.byStatus[ep.Status], p.Split.ID())
			}
			for _, ids := range e.byStatus {
				sort.Strings(ids)
			}
			sort.Slice(e.Partitions, func(i, j int) bool {
				a, b := e.Partitions[i], e.Partitions[j]
				return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
			})
		} else if f := src.FileEnum; f != nil {
			for i := range f.Pending {
				e.PendingFiles = append(e.PendingFiles, fileView(&f.Pending[i]))
			}
			e.ProcessedPaths = append([]string{}, f.ProcessedPaths...)
			sort.Strings(e.ProcessedPaths)
		} else {
			e.Base64 = base64.StdEncoding.EncodeToString(c.Enum.Payload)
			if src.EnumErr != nil {
				e.Note = src.EnumErr.Error()
			}
		}
		o.Enumerator = e
	}
	return o
}

// describeLegacy lists a FlinkKafkaConsumer's union state: one row per partition, starting where
// the consumer resumes (the offset after the last one it emitted), the stored value in the note.
func describeLegacy(op *metadata.OperatorState, offs []sourcestate.LegacyKafkaOffset) offsetsSource {
	o := offsetsSource{Operator: opLabel(op), UID: op.UID, Hash: op.ID.String(), Name: op.Name, Connector: sourcestate.ConnectorKafkaLegacy, Splits: []offsetsSplit{}}
	for _, l := range offs {
		p, stored := l.Partition, l.Offset
		var resume *int64
		if stored >= 0 {
			n := stored + 1
			resume = &n
		}
		o.Splits = append(o.Splits, offsetsSplit{Subtask: l.Subtask, Index: l.Index, Topic: l.Topic, Partition: &p,
			StartingOffset: resume, Starting: sourcestate.LegacyResumeText(stored), Stopping: "none",
			Note: "union state " + sourcestate.LegacyKafkaStateName + " holds the last offset emitted: " + sourcestate.LegacyOffsetText(stored)})
	}
	return o
}

// isKafkaLike: some splits decoded as Kafka's, so the ones that did not are worth a note.
func isKafkaLike(src *sourcestate.Source) bool {
	for _, s := range src.Splits {
		if s.Kafka != nil {
			return true
		}
	}
	return false
}

var offsetsColumns = []string{"operator", "name", "subtask", "connector", "topic", "partition", "starting", "stopping"}

func offsetsCells(o offsetsSource, s offsetsSplit) []string {
	part, topic := "", s.Topic
	if s.Partition != nil {
		part = strconv.Itoa(int(*s.Partition))
	}
	start, stop := s.Starting, s.Stopping
	if f := s.File; f != nil { // topic: the file; partition: the split id; stopping: the split's end
		topic, part, stop = f.Path, f.ID, fmt.Sprintf("bytes %d..%d", f.Offset, f.Offset+f.Length)
	}
	if s.Base64 != "" {
		// the payload's length (DecodedLen would count the padding too)
		n := base64.StdEncoding.DecodedLen(len(s.Base64)) - strings.Count(s.Base64, "=")
		topic = fmt.Sprintf("(serializer v%d, %d bytes)", s.SerializerVersion, n)
		start = s.Base64
	}
	return []string{o.Operator, o.Name, strconv.Itoa(int(s.Subtask)), o.Connector, topic, part, start, stop}
}

func offsetsCSV(w io.Writer, out []offsetsSource) error {
	cw := csv.NewWriter(w)
	cw.Write(offsetsColumns)
	for _, o := range out {
		for _, s := range o.Splits {
			cw.Write(offsetsCells(o, s))
		}
	}
	cw.Flush()
	return cw.Error()
}

func offsetsTable(w io.Writer, out []offsetsSource) error {
	if len(out) == 0 {
		_, err := fmt.Fprintln(w, "no source operators (no SourceReaderState, no FlinkKafkaConsumer state) in this savepoint")
		return err
	}
	tw := newTable(w, fittable.Column{Header: "operator", Elide: true}, fittable.Column{Header: "name", Elide: true, Drop: 1},
		fittable.Column{Header: "connector", Drop: 2}, fittable.Column{Header: "topic", Elide: true}, fittable.Column{Header: "partition", Short: "part"})
	fmt.Fprintln(tw, strings.Join(offsetsColumns, "\t"))
	for _, o := range out {
		for _, s := range o.Splits {
			fmt.Fprintln(tw, strings.Join(offsetsCells(o, s), "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tx := newTextWriter(w) // the notes and enumerator lines, wrapped to the width the table fits
	for _, o := range out {
		for _, s := range o.Splits {
			if s.Base64 != "" && s.Note != "" { // why a split of a Kafka source was not decoded
				fmt.Fprintf(tx, "not decoded: %s\n", s.Note)
			}
		}
	}
	for _, o := range out {
		e := o.Enumerator
		if e == nil {
			continue
		}
		fmt.Fprintf(tx, "enumerator of %s (state version %d):", o.Operator, e.SerializerVersion)
		if o.Connector == sourcestate.ConnectorFiles {
			var pending []string
			for _, f := range e.PendingFiles {
				pending = append(pending, f.Path)
			}
			fmt.Fprintf(tx, " pending %d [%s]; already processed %d [%s]\n", len(pending), strings.Join(pending, " "),
				len(e.ProcessedPaths), strings.Join(e.ProcessedPaths, " "))
			continue
		}
		if e.InitialDiscoveryFinished == nil {
			fmt.Fprintf(tx, " not decoded (%s), %s\n", e.Note, e.Base64)
			continue
		}
		done := "finished"
		if !*e.InitialDiscoveryFinished {
			done = "not finished"
		}
		fmt.Fprintf(tx, " initial discovery %s; assigned %d [%s]; pending %d [%s]\n", done,
			len(e.byStatus["assigned"]), strings.Join(e.byStatus["assigned"], " "),
			len(e.byStatus["unassigned"]), strings.Join(e.byStatus["unassigned"], " "))
	}
	return nil
}

// sourceElementValue shows a source reader's split (an element of SourceReaderState) decoded
// when it is a Kafka split, and an element of a legacy FlinkKafkaConsumer's union state decoded
// (its Kryo bytes are otherwise opaque), as savepoint offsets does; anything else is left as the
// dump found it.
func sourceElementValue(e opstate.Element) any {
	state, v := e.State, e.Value
	if state == sourcestate.LegacyKafkaStateName {
		l, err := sourcestate.DecodeLegacyKafkaElement(e.Raw, state)
		if err != nil {
			return v
		}
		return legacyOffsetValue{Connector: sourcestate.ConnectorKafkaLegacy, Topic: l.Topic, Partition: l.Partition,
			Offset: l.Offset, Stored: sourcestate.LegacyOffsetText(l.Offset), Starting: sourcestate.LegacyResumeText(l.Offset)}
	}
	b, ok := v.([]byte)
	if state != sourcestate.ReaderStateName || !ok {
		return v
	}
	raw, err := sourcestate.ReadVersionedBytes(b, state)
	if err != nil {
		return v
	}
	k, err := sourcestate.DecodeKafkaSplit(raw.Version, raw.Payload, state)
	if err != nil {
		if f, err := sourcestate.DecodeFileSplit(raw.Version, raw.Payload, state); err == nil {
			return fileSplitValue{SerializerVersion: raw.Version, Connector: sourcestate.ConnectorFiles, offsetsFile: fileView(&f)}
		}
		// another connector's split: its serializer version and payload, as offsets lists it
		return rawSplitValue{SerializerVersion: raw.Version, Connector: sourcestate.ConnectorUnknown,
			Base64: base64.StdEncoding.EncodeToString(raw.Payload)}
	}
	return offsetsSplitValue{SerializerVersion: raw.Version, Connector: sourcestate.ConnectorKafka, Topic: k.Topic, Partition: k.Partition,
		StartingOffset: k.StartingOffset, Starting: sourcestate.StartingText(k.StartingOffset),
		StoppingOffset: k.StoppingOffset, Stopping: sourcestate.StoppingText(k.StoppingOffset)}
}

// offsetsSplitValue is a decoded Kafka split in dump output.
type offsetsSplitValue struct {
	SerializerVersion int32  `json:"serializerVersion"`
	Connector         string `json:"connector"`
	Topic             string `json:"topic"`
	Partition         int32  `json:"partition"`
	StartingOffset    int64  `json:"startingOffset"`
	Starting          string `json:"starting"`
	StoppingOffset    int64  `json:"stoppingOffset"`
	Stopping          string `json:"stopping"`
}

// rawSplitValue is a split of a connector statecraft does not decode, in dump output: the
// payload without SimpleVersionedSerialization's frame, whose version it names.
type rawSplitValue struct {
	SerializerVersion int32  `json:"serializerVersion"`
	Connector         string `json:"connector"`
	Base64            string `json:"base64"`
}

// legacyOffsetValue is a decoded FlinkKafkaConsumer union-state element in dump output: the
// last offset emitted (or a sentinel), and where the consumer resumes.
type legacyOffsetValue struct {
	Connector string `json:"connector"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Stored    string `json:"stored"`
	Starting  string `json:"starting"`
}

// fileSplitValue is a decoded FileSource split in dump output.
type fileSplitValue struct {
	SerializerVersion int32  `json:"serializerVersion"`
	Connector         string `json:"connector"`
	*offsetsFile
}

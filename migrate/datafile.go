package migrate

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// recordReader yields the records of a data file (savepoint create --data, migrate patch
// --data) one JSON object at a time, with its line number for errors; io.EOF at the end.
type recordReader interface {
	next() (rec []byte, line int, err error)
}

// eachRecord calls fn with every record of the data file name (read from r): JSONL, or CSV
// when the name ends in .csv. rec is valid only during the call.
func eachRecord(name string, r io.Reader, fn func(rec []byte, where string) error) error {
	var recs recordReader = &jsonlRecords{name: name, br: bufio.NewReaderSize(r, 1<<20)}
	if strings.EqualFold(filepath.Ext(name), ".csv") {
		c, err := newCSVRecords(name, r)
		if err != nil {
			return err
		}
		recs = c
	}
	for {
		b, line, err := recs.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(b, name+":"+strconv.Itoa(line)); err != nil {
			return err
		}
	}
}

// jsonlRecords reads one JSON object a line; blank lines are skipped, a line may be of any
// length.
type jsonlRecords struct {
	name string
	br   *bufio.Reader
	line int
	long []byte
	eof  bool
}

func (j *jsonlRecords) next() ([]byte, int, error) {
	for !j.eof {
		j.line++
		b, err := j.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			j.long = append(j.long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = j.br.ReadSlice('\n')
				j.long = append(j.long, b...)
			}
			b = j.long
		}
		switch {
		case errors.Is(err, io.EOF):
			j.eof = true
		case err != nil:
			return nil, 0, fmt.Errorf("%s: line %d: %w", j.name, j.line, err)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			return b, j.line, nil
		}
	}
	return nil, 0, io.EOF
}

// csvFields are the columns a CSV data file may have: the fields `savepoint dump` prints.
// Text columns hold their text as is; every other cell is a JSON value (4, [1,2],
// {"f0":1,"f1":"a"}, null), or, when it is not valid JSON, a string: user-0 is "user-0", while
// a string that reads as JSON (a String value 4) is written as JSON ("4", in CSV """4""").
// An empty cell is an absent field (a null namespace or user key).
var csvFields = map[string]bool{
	"operator": true, "state": true, "keyGroup": false, "key": false, "namespace": false, "userKey": false,
	"value": false, "ttlTimestamp": false, "kind": true, "timestamp": false, "mode": true, "op": true,
	"subtask": false, "index": false,
}

// csvRecords reads CSV with a header line naming each column (csvFields), and turns each row
// into the JSON object its line in a JSONL file would be, one row after the other. (A load reads
// a CSV file in blocks on every core: loadcsv.go.)
type csvRecords struct {
	name  string
	r     *csv.Reader
	shape *csvShape
	rec   []byte
}

func newCSVRecords(name string, r io.Reader) (*csvRecords, error) {
	c := &csvRecords{name: name, r: csv.NewReader(bufio.NewReaderSize(r, 1<<20))}
	c.r.ReuseRecord = true
	head, err := c.r.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty CSV file: want a header line naming the columns (operator,state,keyGroup,key,...)", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	if c.shape, err = csvShapeOf(name, head); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *csvRecords) next() ([]byte, int, error) {
	row, err := c.r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, 0, io.EOF
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			// Field counts and quoting: the reader's own message names line and column.
			return nil, 0, fmt.Errorf("%s:%d: %w", c.name, pe.StartLine, pe.Err)
		}
		return nil, 0, fmt.Errorf("%s: %w", c.name, err)
	}
	line, _ := c.r.FieldPos(0)
	c.rec, err = record(c.shape, c.rec[:0], row, func() string { return c.name + ":" + strconv.Itoa(line) })
	if err != nil {
		return nil, 0, err
	}
	return c.rec, line, nil
}

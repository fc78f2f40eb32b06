package migrate

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// A CSV data file is read in blocks of whole records, encoded on every core, as JSONL is (see
// readBlocks): a block ends after a line break outside quotes. A quoted cell may hold line
// breaks, and a quote inside it is doubled, so a line break is outside quotes when the quotes
// before it, from the start of the file, are even in number:
//
//	operator,state,key,value\n                   header: read first, the columns of every row
//	uid:a,names,4,"[\n""x""]"\n                  the first \n is inside quotes (1 quote before it)
//	uid:a,count,4,7\n                            a block may end after either of these
//
// Each worker splits its blocks' lines without quotes at their commas itself and hands a record
// with quotes to encoding/csv (fields per row: the header's), turns each row into the JSON
// object its line in a JSONL file would be (record) and encodes that as a JSONL line, so the
// errors are those of the sequential reader (csvRecords), naming the same lines: a block's line
// numbers start at its first line's number in the file.

// csvShape is what every block of a CSV data file is read with: its columns, from the header,
// and for each the start of its field in a JSON object (`"name":`) and whether it holds text.
type csvShape struct {
	cols  []string
	names [][]byte
	text  []bool
}

// csvHeaderEnd is the length of the header record at the start of data (through its line
// break), or len(data) when the header is the whole of data.
func csvHeaderEnd(data []byte) int {
	if end := csvCut(data, true); end >= 0 {
		return end
	}
	return len(data)
}

// csvCut is the end of the last whole record of data (first: of the first), which starts at a
// record's start: just past a line break outside quotes, or -1 when there is none.
// The first record's end is looked for from the start only: data may be the rest of a mapped
// file, whose every page a search for a quote through the whole of it would read.
func csvCut(data []byte, first bool) int {
	if !first && bytes.IndexByte(data, '"') < 0 {
		return endAfter(bytes.LastIndexByte(data, '\n'))
	}
	cut, in := -1, false
	for i := 0; i < len(data); {
		j := bytes.IndexAny(data[i:], "\"\n")
		if j < 0 {
			break
		}
		i += j
		if data[i] == '"' {
			in = !in
		} else if !in {
			if cut = i + 1; first {
				return cut
			}
		}
		i++
	}
	return cut
}

func endAfter(i int) int {
	if i < 0 {
		return -1
	}
	return i + 1
}

// csvStart reads the header of the CSV data file name, from its mapping (mapped) or else from
// r, and gives every worker its columns: where the records start in the mapping, the number
// of their first line, and the reader of the rest of the stream.
func csvStart(name string, mapped []byte, r io.Reader, ws []*loadWorker) (start, line int, rest io.Reader, err error) {
	var header []byte
	if mapped != nil {
		err = whileMapped(name, func() error {
			start = csvHeaderEnd(mapped)
			header = bytes.Clone(mapped[:start])
			return nil
		})
	} else {
		header, r, err = readCSVHeader(name, r)
	}
	if err != nil {
		return 0, 0, nil, err
	}
	shape, err := parseCSVHeader(name, header)
	if err != nil {
		return 0, 0, nil, err
	}
	for _, w := range ws {
		w.csv = shape
	}
	return start, 1 + bytes.Count(header, []byte{'\n'}), r, nil
}

// readCSVHeader reads the header record of a CSV stream: its bytes, and the stream after it.
func readCSVHeader(name string, r io.Reader) ([]byte, io.Reader, error) {
	var data []byte
	buf := make([]byte, 64<<10)
	for {
		if end := csvCut(data, true); end >= 0 {
			return data[:end], io.MultiReader(bytes.NewReader(data[end:]), r), nil
		}
		k, err := r.Read(buf)
		data = append(data, buf[:k]...)
		if errors.Is(err, io.EOF) {
			return data, bytes.NewReader(nil), nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: header: %w", name, err)
		}
	}
}

// parseCSVHeader reads the header record of the data file name (csvHeaderEnd's bytes).
func parseCSVHeader(name string, header []byte) (*csvShape, error) {
	head, err := csv.NewReader(bytes.NewReader(header)).Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty CSV file: want a header line naming the columns (operator,state,keyGroup,key,...)", name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	return csvShapeOf(name, head)
}

// csvShapeOf checks the header of the data file name: the columns (csvFields), each once, the
// operator's among them.
func csvShapeOf(name string, head []string) (*csvShape, error) {
	c := &csvShape{}
	for i, h := range head {
		h = strings.TrimSpace(h)
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		if _, ok := csvFields[h]; !ok {
			known := make([]string, 0, len(csvFields))
			for k := range csvFields {
				known = append(known, k)
			}
			slices.Sort(known)
			return nil, fmt.Errorf("%s:1: column %d %q: not a field of `savepoint dump`'s records (want %s)", name, i+1, h, strings.Join(known, ", "))
		}
		if slices.Contains(c.cols, h) {
			return nil, fmt.Errorf("%s:1: column %d %q: given twice", name, i+1, h)
		}
		c.cols = append(c.cols, h)
		c.names = append(c.names, append(strconv.AppendQuote(nil, h), ':'))
		c.text = append(c.text, csvFields[h])
	}
	if !slices.Contains(c.cols, "operator") {
		return nil, fmt.Errorf("%s:1: no operator column: every record names its operator", name)
	}
	return c, nil
}

// record appends to dst the JSON object of one row (where: FILE:LINE, for errors): text
// columns as strings, other cells as the JSON they hold or, when they hold none, as strings;
// empty cells left out (csvFields). The cells are strings (encoding/csv's) or the bytes of an
// unquoted line (splitPlain).
func record[C string | []byte](c *csvShape, dst []byte, row []C, where func() string) ([]byte, error) {
	dst = append(dst, '{')
	for i, cell := range row {
		if len(cell) == 0 {
			continue
		}
		if len(dst) > 1 {
			dst = append(dst, ',')
		}
		dst = append(dst, c.names[i]...)
		switch {
		case !c.text[i] && jsonInteger(cell):
			dst = append(dst, cell...)
		case c.text[i] || !json.Valid([]byte(cell)):
			if plainString(cell) {
				dst = append(append(append(dst, '"'), cell...), '"')
				break
			}
			q, err := json.Marshal(string(cell))
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", where(), c.cols[i], err)
			}
			dst = append(dst, q...)
		default:
			dst = append(dst, cell...)
		}
	}
	return append(dst, '}'), nil
}

// jsonInteger reports whether s is an integer as JSON writes it (-?(0|[1-9][0-9]*)): the
// cells of most columns, which then need no JSON validation.
func jsonInteger[C string | []byte](s C) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// plainString reports whether s is printable ASCII that JSON writes as it is between quotes
// (no quote, backslash, control character, or <, >, & that encoding/json escapes).
func plainString[C string | []byte](s C) bool {
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b < 0x20 || b >= 0x7f, b == '"', b == '\\', b == '<', b == '>', b == '&':
			return false
		}
	}
	return true
}

// batchCSV encodes the rows of bt, whole CSV records, stopping at the first error. A line
// without a quote is split at its commas where it lies (splitPlain); a record with quotes is
// read by encoding/csv, from where it starts.
func (w *loadWorker) batchCSV(bt *loadBatch) {
	data, line := bt.data, bt.first
	for len(data) > 0 {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			end = len(data)
		}
		if bytes.IndexByte(data[:end], '"') < 0 {
			text := data[:end]
			if len(text) > 0 && text[len(text)-1] == '\r' {
				text = text[:len(text)-1] // as encoding/csv, before a line break or the end
			}
			if len(text) > 0 { // blank lines are skipped, as encoding/csv skips them
				if !w.splitPlain(text) {
					bt.err = fmt.Errorf("%s:%d: %w", w.name, line, csv.ErrFieldCount)
					return
				}
				if bt.err = csvRow(w, bt, w.csvCells, line); bt.err != nil {
					return
				}
			}
			data, line = data[min(end+1, len(data)):], line+1
			continue
		}
		n, lines, err := w.quotedRecord(bt, data, line)
		if err != nil {
			bt.err = err
			return
		}
		data, line = data[n:], line+lines
	}
}

// splitPlain splits a line without quotes at its commas into w.csvCells, and reports whether
// it has the header's number of fields.
func (w *loadWorker) splitPlain(text []byte) bool {
	cells := w.csvCells[:0]
	for len(cells) <= len(w.csv.cols) {
		i := bytes.IndexByte(text, ',')
		if i < 0 {
			cells = append(cells, text)
			break
		}
		cells, text = append(cells, text[:i]), text[i+1:]
	}
	w.csvCells = cells
	return len(cells) == len(w.csv.cols)
}

// quotedRecord reads the record at the start of data (line: its line in the file) with
// encoding/csv and encodes it: the bytes and the line breaks it took.
func (w *loadWorker) quotedRecord(bt *loadBatch, data []byte, line int) (int, int, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = len(w.csv.cols)
	row, err := r.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			// field counts and quoting: the reader's own message, at the line in the file
			return 0, 0, fmt.Errorf("%s:%d: %w", w.name, line+pe.StartLine-1, pe.Err)
		}
		return 0, 0, fmt.Errorf("%s:%d: %w", w.name, line, err)
	}
	at, _ := r.FieldPos(0)
	n := int(r.InputOffset())
	if err := csvRow(w, bt, row, line+at-1); err != nil {
		return 0, 0, err
	}
	return n, bytes.Count(data[:n], []byte{'\n'}), nil
}

// csvRow encodes one row, the record starting at line (of the file).
func csvRow[C string | []byte](w *loadWorker, bt *loadBatch, row []C, line int) error {
	var err error
	if w.csvRec, err = record(w.csv, w.csvRec[:0], row, func() string { return w.name + ":" + strconv.Itoa(line) }); err != nil {
		return err
	}
	return w.record(bt, w.csvRec, line)
}

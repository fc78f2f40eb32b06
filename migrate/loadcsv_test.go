package migrate

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCSVBlocks: a CSV file read in blocks on every core, mapped or streamed, gives the
// records the decoding path gives line by line in the file's order, when quoted cells hold line
// breaks and quotes and the blocks' boundaries fall among them; and the first bad row is the
// one reported, at its line in the file, though a quoted cell before it spans lines.
func TestReadCSVBlocks(t *testing.T) {
	src := fixture(t, "types-hashmap")
	var lines []string // JSONL of the records: string values with a line break and quotes
	for _, l := range dumpKeyed(t, src) {
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if s, ok := m["value"].(string); ok {
			m["value"] = s + "\n\"q\", x"
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	cols := csvColumns
	// row is one record's CSV text: objects and arrays indented (line breaks in quoted cells).
	row := func(l string) string {
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		cells := make([]string, len(cols))
		for i, c := range cols {
			switch v := m[c].(type) {
			case nil:
			case string:
				cells[i] = v
				if !csvFields[c] && json.Valid([]byte(v)) {
					j, _ := json.Marshal(v)
					cells[i] = string(j)
				}
			default:
				j, err := json.MarshalIndent(v, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				cells[i] = string(j)
			}
		}
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Write(cells)
		w.Flush()
		return b.String()
	}
	var data []string
	for i := 0; len(data) < 100000; i++ {
		data = append(data, lines[i%len(lines)])
	}
	csvText := func(data []string) (string, []int) {
		var b strings.Builder
		b.WriteString(strings.Join(cols, ",") + "\n")
		at := make([]int, len(data)) // each record's first line
		n := 2
		for i, l := range data {
			r := row(l)
			if strings.Contains(l, "uid:nope") {
				r = "uid:nope" + strings.Repeat(",", len(cols)-1) + "\n"
			}
			at[i] = n
			n += strings.Count(r, "\n")
			b.WriteString(r)
		}
		return b.String(), at
	}
	text, _ := csvText(data)
	if len(text) < 3*loadBlock {
		t.Fatalf("%d bytes: want blocks enough to cut among the quoted line breaks", len(text))
	}
	if strings.Count(text, "\"") < 1000 {
		t.Fatal("no quoted cells")
	}
	ref, err := decodedOneByOne(t, src, "data.csv", linesOf(data))
	if err != nil {
		t.Fatal(err)
	}
	read := func(t *testing.T, text string, mapped bool) (string, error) {
		return readText(t, src, "data.csv", text, mapped)
	}
	bad := append([]string(nil), data...)
	bad[30000] = `{"operator":"uid:nope"}`
	bad[99000] = `{"operator":"uid:nope"}`
	badText, at := csvText(bad)
	want := fmt.Sprintf("data.csv:%d: operator \"uid:nope\"", at[30000])
	for _, mapped := range []bool{true, false} {
		got, err := read(t, text, mapped)
		if err != nil {
			t.Fatal(err)
		}
		if got != ref {
			t.Fatalf("mapped %v: the blocks' records differ from the records decoded one by one in order", mapped)
		}
		if _, err := read(t, badText, mapped); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("mapped %v: want %q, got %v", mapped, want, err)
		}
	}
}

// TestCSVCut: the end of the last (or first) whole record is after a line break outside
// quotes, doubled quotes inside a quoted cell included.
func TestCSVCut(t *testing.T) {
	for _, tc := range []struct {
		data        string
		last, first int
	}{
		{"", -1, -1},
		{"a,b", -1, -1},
		{"a,b\n", 4, 4},
		{"a,b\nc,d\ne", 8, 4},
		{"a,\"b\nc\"\n", 8, 8},
		{"a,\"b\nc\"\nd,\"e\n", 8, 8},
		{"a,\"\"\"b\n\"\"\"\nz", 11, 11},
		{"\"x\"\"\n\"\"\"", -1, -1},
		{"a\r\nb\r\n", 6, 3},
	} {
		if got := csvCut([]byte(tc.data), false); got != tc.last {
			t.Errorf("csvCut(%q, last) = %d, want %d", tc.data, got, tc.last)
		}
		if got := csvCut([]byte(tc.data), true); got != tc.first {
			t.Errorf("csvCut(%q, first) = %d, want %d", tc.data, got, tc.first)
		}
	}
}

// TestCSVCellFastPaths: a cell jsonInteger takes is valid JSON, and one plainString takes is
// written by encoding/json as it is between quotes, so the row's JSON object is the one the
// slow path (json.Valid, json.Marshal) makes; on cells of every byte and on the edge cases.
func TestCSVCellFastPaths(t *testing.T) {
	cells := []string{"0", "-0", "7", "-12", "007", "-", "", "1.5", "1e3", "+1", "12a", "user-0", "a b", "x<y", "a&b", `q"`, `b\s`, "tab\t", "é", "\x7f", "~", "null", "true"}
	for b := 0; b < 256; b++ {
		cells = append(cells, string([]byte{byte(b)}), "1"+string([]byte{byte(b)}), "a"+string([]byte{byte(b)}))
	}
	for _, s := range cells {
		if jsonInteger(s) {
			var n json.Number
			if !json.Valid([]byte(s)) || json.Unmarshal([]byte(s), &n) != nil {
				t.Errorf("jsonInteger(%q): not a JSON number", s)
			}
		}
		if plainString(s) {
			j, err := json.Marshal(s)
			if err != nil || string(j) != `"`+s+`"` {
				t.Errorf("plainString(%q): encoding/json writes %s", s, j)
			}
		}
	}
	for s, want := range map[string]bool{"0": true, "-0": true, "7": true, "-12": true, "1234567890123456789012": true, "007": false, "-": false, "": false, "1.5": false, "+1": false} {
		if got := jsonInteger(s); got != want {
			t.Errorf("jsonInteger(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestBatchCSVAgreesWithEncodingCSV: the rows a worker splits itself (lines without quotes) and
// those it hands to encoding/csv give the records and errors of the sequential reader
// (csvRecords, all encoding/csv): carriage returns, blank lines, empty cells, spaces, a last
// line without a line break, and rows with too many or too few fields, next to quoted ones.
func TestBatchCSVAgreesWithEncodingCSV(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	head := "operator,state,key,userKey,value\n"
	for _, tc := range []struct{ name, rows string }{
		{"plain", "uid:int-keyed,count,4,,7\nuid:int-keyed,seen,4,m1,28\n"},
		{"carriage returns", "uid:int-keyed,count,4,,7\r\nuid:int-keyed,seen,4,m1,28\r\n"},
		{"blank lines", "\nuid:int-keyed,count,4,,7\n\r\n\nuid:int-keyed,seen,4,m1,28\n\n"},
		{"no final line break", "uid:int-keyed,count,4,,7\nuid:int-keyed,seen,4,m1,28"},
		{"no final line break, carriage return", "uid:int-keyed,count,4,,7\nuid:int-keyed,seen,4,m1,28\r"},
		{"quoted next to plain", "uid:int-keyed,seen,4,\"m\n1\",28\nuid:int-keyed,count,4,,7\n\"uid:int-keyed\",count,5,,\"8\"\n"},
		{"spaces", "uid:int-keyed,seen,4, m1 ,28\n"},
		{"carriage return inside a cell", "uid:int-keyed,seen,4,m\r1,28\nuid:int-keyed,seen,4,m1\r,28\r\n"},
		{"too many fields", "uid:int-keyed,count,4,,7\nuid:int-keyed,count,4,,7,\n"},
		{"too few fields", "uid:int-keyed,count,4,,7\nuid:int-keyed,count,4\n"},
		{"too few after quoted", "uid:int-keyed,seen,4,\"m\n\n1\",28\nuid:int-keyed,count\n"},
		{"bad value", "uid:int-keyed,count,4,,7\nuid:int-keyed,count,5,,x\n"},
		{"bare quote", "uid:int-keyed,count,4,,7\nuid:int-keyed,se\"en,5,,1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := head + tc.rows
			want, wantErr := readSequentialCSV(t, src, text)
			for _, mapped := range []bool{true, false} {
				sameAsSequential(t, src, text, mapped, want, wantErr)
			}
		})
	}
}

// readSequentialCSV is the reference for a CSV data file's text: the sequential reader's
// records (csvRecords, all encoding/csv), decoded one by one, as loadedParts, and its error.
func readSequentialCSV(t *testing.T, src, text string) (string, error) {
	t.Helper()
	return decodedOneByOne(t, src, "data.csv", func(fn func(rec []byte, where string) error) error {
		return eachRecord("data.csv", strings.NewReader(text), fn)
	})
}

// sameAsSequential reads text as a CSV data file in blocks (mapped or streamed) and fails t
// unless it gives the sequential reader's records (want) or error (wantErr, the same message
// after the file's name).
func sameAsSequential(t *testing.T, src, text string, mapped bool, want string, wantErr error) {
	t.Helper()
	got, err := readText(t, src, "data.csv", text, mapped)
	if (err == nil) != (wantErr == nil) || (err != nil && !strings.HasSuffix(err.Error(), strings.TrimPrefix(wantErr.Error(), "data.csv"))) {
		t.Fatalf("mapped %v: error %v, the sequential reader's %v", mapped, err, wantErr)
	}
	if err == nil && got != want {
		t.Fatalf("mapped %v: records\n%s\nthe sequential reader's\n%s", mapped, got, want)
	}
}

// FuzzCSVBlocks: any rows after keyed-hashmap's CSV header, read in blocks (rows split by the
// worker or by encoding/csv), mapped or streamed, give the sequential reader's records or its
// error. Seeds: TestBatchCSVAgreesWithEncodingCSV's rows.
func FuzzCSVBlocks(f *testing.F) {
	for _, rows := range []string{
		"uid:int-keyed,count,4,,7\nuid:int-keyed,seen,4,m1,28\n",
		"\nuid:int-keyed,count,4,,7\r\n\r\n\nuid:int-keyed,seen,4,m1,28",
		"uid:int-keyed,seen,4,\"m\n1\",28\nuid:int-keyed,count,4,,7\n\"uid:int-keyed\",count,5,,\"8\"\n",
		"uid:int-keyed,count,4,,7,\nuid:int-keyed,count,4\n",
		"uid:int-keyed,se\"en,5,,1\n",
		"uid:int-keyed,minmax,4,,\"{\"\"f0\"\":1,\"\"f1\"\":2}\"\n",
	} {
		f.Add(rows)
	}
	src := filepath.Join("..", "testdata", "savepoints", "keyed-hashmap")
	if _, err := os.Stat(filepath.Join(src, "_metadata")); err != nil {
		f.Skipf("no keyed-hashmap fixture: %v", err)
	}
	f.Fuzz(func(t *testing.T, rows string) {
		text := "operator,state,key,userKey,value\n" + rows
		want, wantErr := readSequentialCSV(t, src, text)
		sameAsSequential(t, src, text, rows != "" && rows[0]%2 == 0, want, wantErr)
	})
}

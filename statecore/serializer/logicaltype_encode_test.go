package serializer

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// TestLogicalTypeStreamsAreFlinks: every Java-serialized LogicalType of a type DeclareRowData
// declares, found in any file under testdata (keyed-state headers and _metadata files Flink
// 2.3.0 and 1.20 wrote), is byte for byte the stream statecraft writes for its SQL rendering;
// and the types met include nullable and NOT NULL ones with and without parameters.
func TestLogicalTypeStreamsAreFlinks(t *testing.T) {
	magic := []byte{0xAC, 0xED, 0x00, 0x05, tcObject, tcClassDesc}
	seen := map[string]int{}
	eachTestdataFile(t, func(path string, b []byte) {
		for i := bytes.Index(b, magic); i >= 0; {
			sql, ok := LogicalTypeSQL(b[i:])
			if ok {
				if mine, _, err := logicalType(sql); err == nil {
					if timeAttribute(b[i:], mine) {
						// A rowtime or proctime column renders as TIMESTAMP(p) too; statecraft
						// declares the regular kind only (a plan types a time attribute apart).
						seen[sql+" (time attribute)"]++
					} else if !bytes.HasPrefix(b[i:], mine) {
						t.Errorf("%s@%d: %s: Flink wrote\n%x\nstatecraft writes\n%x", path, i, sql, b[i:min(len(b), i+len(mine))], mine)
					}
					seen[sql]++
				}
			}
			j := bytes.Index(b[i+1:], magic)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	})
	var kinds []string
	for sql := range seen {
		kinds = append(kinds, sql)
	}
	slices.Sort(kinds)
	t.Logf("compared: %v", seen)
	notNull, params := false, false
	for _, k := range kinds {
		notNull = notNull || strings.HasSuffix(k, " NOT NULL")
		params = params || strings.Contains(k, "(")
	}
	if len(kinds) < 4 || !notNull || !params {
		t.Fatalf("only %v met in the fixtures: the test proves less than it says", kinds)
	}
}

// timeAttribute reports whether flink is the stream mine (a TimestampType of kind REGULAR) with
// the kind ROWTIME or PROCTIME instead.
func timeAttribute(flink, mine []byte) bool {
	regular := []byte{0, 7, 'R', 'E', 'G', 'U', 'L', 'A', 'R'}
	base, ok := bytes.CutSuffix(mine, regular)
	if !ok {
		return false
	}
	for _, kind := range []string{"ROWTIME", "PROCTIME"} {
		if bytes.HasPrefix(flink, append(append(slices.Clone(base), 0, byte(len(kind))), kind...)) {
			return true
		}
	}
	return false
}

// TestDeclareRowDataRefusals: a type DeclareRowData cannot write is one error naming the field
// and what it takes.
func TestDeclareRowDataRefusals(t *testing.T) {
	for _, tc := range []struct {
		types []string
		want  string
	}{
		{[]string{"BIGINT", "DATE"}, `field 1: SQL type "DATE": statecraft declares BOOLEAN`},
		{[]string{"TIMESTAMP(3) *ROWTIME*"}, `field 0: SQL type "TIMESTAMP(3) *ROWTIME*": parameters must be`},
		{[]string{"VARCHAR"}, `field 0: SQL type "VARCHAR": VARCHAR takes 1 parameters, not 0`},
		{[]string{"INT(3)"}, `field 0: SQL type "INT(3)": INT takes 0 parameters, not 1`},
		{[]string{"VARCHAR(x)"}, `field 0: SQL type "VARCHAR(x)": parameters must be positive integers`},
	} {
		if _, err := DeclareRowData(tc.types); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.types, err, tc.want)
		}
	}
}

// TestExternalDataTypesAreFlinks: every Java-serialized AtomicDataType of a boxed conversion
// class, or of StringData, DecimalData or TimestampData (a DISTINCT key's internal type), found
// under testdata (the data views' ExternalSerializer snapshots Flink 2.3.0 and 1.20 wrote) is byte
// for byte the stream DeclareExternal writes for its logical type, and the fixtures hold
// nullable and NOT NULL ones, and strings, decimals and timestamps.
func TestExternalDataTypesAreFlinks(t *testing.T) {
	magic := append([]byte{0xAC, 0xED, 0x00, 0x05, tcObject, tcClassDesc, 0, 43}, "org.apache.flink.table.types.AtomicDataType"...)
	seen := map[string]int{}
	eachTestdataFile(t, func(path string, b []byte) {
		for off := 0; ; {
			i := bytes.Index(b[off:], magic)
			if i < 0 {
				return
			}
			off += i
			s := &javaSerSkipper{r: javaio.NewBytesReader(b[off:], path, 0), field: "dataType"}
			s.u16()
			s.u16()
			o, _ := s.content().(*jsObject)
			off++
			if o == nil {
				t.Errorf("%s@%d: an AtomicDataType statecraft cannot read", path, off-1)
				continue
			}
			lt, _ := o.fields["logicalType"].(*jsObject)
			cls, _ := o.fields["conversionClass"].(jsClassValue)
			sql, ok := "", lt != nil
			if ok {
				sql, ok = renderLogicalType(lt)
			}
			conv, known := externalConversion(strings.TrimSuffix(sql, " NOT NULL"))
			if !ok || !known || conv.name != cls.name {
				continue
			}
			mine, _, err := externalDataType(sql)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(s.buf, mine) {
				t.Errorf("%s@%d: %s as %s: Flink wrote\n%x\nstatecraft writes\n%x", path, off-1, sql, cls.name, s.buf, mine)
			}
			seen[sql+" as "+cls.name]++
		}
	})
	t.Logf("compared: %v", seen)
	if seen["BIGINT as java.lang.Long"] == 0 || seen["BIGINT NOT NULL as java.lang.Long"] == 0 || seen["INT as java.lang.Integer"]+seen["INT NOT NULL as java.lang.Integer"] == 0 ||
		seen["VARCHAR(2147483647) as org.apache.flink.table.data.StringData"] == 0 || seen["VARCHAR(20) as org.apache.flink.table.data.StringData"] == 0 ||
		seen["CHAR(3) as org.apache.flink.table.data.StringData"] == 0 || seen["DECIMAL(10, 2) as org.apache.flink.table.data.DecimalData"] == 0 ||
		seen["TIMESTAMP(3) as org.apache.flink.table.data.TimestampData"] == 0 {
		t.Fatalf("the fixtures hold too few data types to prove DeclareExternal: %v", seen)
	}
}

// eachTestdataFile calls fn with the path and bytes of every file under testdata.
func eachTestdataFile(t *testing.T, fn func(path string, b []byte)) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join("..", "..", "testdata"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fn(path, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDecimalTimestampEncoders: DecimalDataSerializer and TimestampDataSerializer values (a
// DISTINCT view's keys) written from their dump form read back the same, compact and not, and
// values the type cannot hold are refused.
func TestDecimalTimestampEncoders(t *testing.T) {
	for _, tc := range []struct {
		s    *Snapshot
		in   string
		want string // the error, when refused
	}{
		{&Snapshot{Class: classDecimalData, Version: 3, Kind: KindDecimalData, Precision: 10, Scale: 2}, "12.50", ""},
		{&Snapshot{Class: classDecimalData, Version: 3, Kind: KindDecimalData, Precision: 10, Scale: 2}, "-99999999.99", ""},
		{&Snapshot{Class: classDecimalData, Version: 3, Kind: KindDecimalData, Precision: 38, Scale: 10}, "-1234567890123456789012345678.0123456789", ""},
		{&Snapshot{Class: classDecimalData, Version: 3, Kind: KindDecimalData, Precision: 38, Scale: 10}, "0.0000000000", ""},
		{&Snapshot{Class: classDecimalData, Version: 3, Kind: KindDecimalData, Precision: 10, Scale: 2}, "1.234", "more than 2 digits after the point"},
		{&Snapshot{Class: classTimestampData, Version: 1, Kind: KindTimestampData, Precision: 3}, `"1969-12-31T23:59:59.999"`, ""},
		{&Snapshot{Class: classTimestampData, Version: 1, Kind: KindTimestampData, Precision: 6}, `"2024-03-01T10:00:00.123456"`, ""},
		{&Snapshot{Class: classTimestampData, Version: 1, Kind: KindTimestampData, Precision: 3}, `"2024-03-01T10:00:00.123456"`, "sub-millisecond digits"},
	} {
		enc, err := NewEncoder(tc.s)
		if err != nil {
			t.Fatal(err)
		}
		d := json.NewDecoder(strings.NewReader(tc.in))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		b, err := enc(nil, v, "userKey")
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		in := NewInput(b)
		got, _ := json.Marshal(NewCodec(tc.s).Decode(in))
		if in.Err() != nil || in.Pos != len(b) || string(got) != tc.in {
			t.Errorf("%s: wrote %x, read back %s (%v, %d of %d bytes)", tc.in, b, got, in.Err(), in.Pos, len(b))
		}
	}
}

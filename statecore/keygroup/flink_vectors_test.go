package keygroup

import (
	"encoding/hex"
	"math"
	"testing"
)

// Vectors printed by Flink 2.3.0 itself: key.hashCode() and
// KeyGroupRangeAssignment.assignToKeyGroup(key, 128 and 32768), run on the oracle's classpath
// (flink-runtime, flink-core, flink-table-runtime 2.3.0); BinaryRowData rows were built with
// BinaryRowWriter and their bytes printed. They confirm the guide's vectors and add types the
// savepoint fixtures do not have (Short, Byte, Character, Double, Float, Row, nested tuples,
// nulls, multi-field SQL keys).
func TestFlinkVectors(t *testing.T) {
	row := func(s string) BinaryRow {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name          string
		key           any
		hash          int32
		kg128, kg32Ki int32
	}{
		{"int 0", int32(0), 0, 94, 31198},
		{"int 1", int32(1), 1, 86, 16342},
		{"int 42", int32(42), 42, 29, 28189},
		{"int -1", int32(-1), -1, 80, 15184},
		{"int MIN_VALUE", int32(math.MinInt32), math.MinInt32, 108, 10348},
		{"Long 42", int64(42), 42, 29, 28189},
		{"Long -1", int64(-1), 0, 94, 31198},
		{"Long 2^32", int64(1) << 32, 1, 86, 16342},
		{"String empty", "", 0, 94, 31198},
		{"String a", "a", 97, 81, 19409},
		{"String hello", "hello", 99162322, 35, 31395},
		{"String flink", "flink", 97520992, 98, 16610},
		{"String ü", "ü", 252, 41, 18601},
		{"String 😀", "😀", 1772899, 54, 7350},
		{"Boolean true", true, 1231, 77, 11725},
		{"Boolean false", false, 1237, 3, 32003},
		{"Double 1.0", 1.0, 1072693248, 71, 6087},
		{"Double -0.0", math.Copysign(0, -1), -2147483648, 108, 10348},
		{"Double NaN", math.NaN(), 2146959360, 41, 12713},
		{"Float 1.0", float32(1.0), 1065353216, 48, 20272},
		{"Float NaN", float32(math.NaN()), 2143289344, 83, 19795},
		{"Short -1", int16(-1), -1, 80, 15184},
		{"Byte -128", int8(-128), -128, 75, 4811},
		{"Character é", Char('é'), 233, 30, 10270},
		{"Tuple2(1, a)", Tuple{int32(1), "a"}, 128, 41, 7209},
		{"Tuple3(1L, null, true)", Tuple{int64(1), nil, true}, 2192, 6, 16262},
		{"Tuple2(Tuple2(1, a), 2.5)", Tuple{Tuple{int32(1), "a"}, 2.5}, 1074007936, 15, 13839},
		{"Row.of(1, a)", Row{Insert, []any{int32(1), "a"}}, 2081, 91, 22619},
		{"Row.ofKind(DELETE, 7L, null)", Row{Delete, []any{int64(7), nil}}, 2232, 87, 8023},
		{"Row.of(Row.of(1), byte[]{1, -2})", Row{Insert, []any{Row{Insert, []any{int32(1)}}, []byte{1, 0xFE}}}, 4896, 16, 9616},
	}
	for _, tc := range cases {
		h, err := HashCode(tc.key)
		if err != nil || h != tc.hash {
			t.Errorf("%s: hashCode = %d, %v; Flink says %d", tc.name, h, err, tc.hash)
		}
		for _, mp := range []struct{ maxP, want int32 }{{128, tc.kg128}, {32768, tc.kg32Ki}} {
			if kg, err := ForKey(tc.key, mp.maxP); err != nil || kg != mp.want {
				t.Errorf("%s: key group at %d = %d, %v; Flink says %d", tc.name, mp.maxP, kg, err, mp.want)
			}
		}
	}
	rows := []struct {
		name  string
		bytes string
		hash  int32
		kg128 int32
	}{
		{"INT 42", "00000000000000002a00000000000000", 907821237, 69},
		{"BIGINT 7", "00000000000000000700000000000000", -348168691, 4},
		{"EMPTY_ROW", "0000000000000000", -1670924195, 11},
		{"INT -5, STRING abc", "0000000000000000fbffffff000000006162630000000083", 297949664, 8},
		{"STRING hello, wörld!, NULL", "00020000000000000e00000018000000000000000000000068656c6c6f2c2077c3b6726c64210000", -1587938861, 23},
	}
	for _, tc := range rows {
		h, err := HashCode(row(tc.bytes))
		if err != nil || h != tc.hash {
			t.Errorf("BinaryRowData %s: hashCode = %d, %v; Flink says %d", tc.name, h, err, tc.hash)
		}
		if kg, _ := ForKey(row(tc.bytes), 128); kg != tc.kg128 {
			t.Errorf("BinaryRowData %s: key group %d, Flink says %d", tc.name, kg, tc.kg128)
		}
	}
}

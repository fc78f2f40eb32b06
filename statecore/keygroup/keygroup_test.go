package keygroup

import (
	"math"
	"testing"
)

// Vectors from /work/shared/guide/formats/hashing-uids-ttl.md §A.8 (computed with Java int
// semantics by the guide's author, not from a Flink run). Vectors from real Flink savepoints are
// in fixtures_test.go.
func TestGuideVectors(t *testing.T) {
	cases := []struct {
		name string
		key  any
		hash int32 // Java hashCode(); 0 with skipHash when the guide gives none
		kg   int32 // key group at max parallelism 128
		skip bool
	}{
		{"int 0", int32(0), 0, 94, false},
		{"int 1", int32(1), 1, 86, false},
		{"int 42", int32(42), 42, 29, false},
		{"int -1", int32(-1), -1, 80, false},
		{"int MIN_VALUE", int32(math.MinInt32), math.MinInt32, 108, false},
		{"Long 42", int64(42), 42, 29, false},
		{"Long -1", int64(-1), 0, 94, false},
		{"Long 2^32", int64(1) << 32, 1, 86, false},
		{"String empty", "", 0, 94, false},
		{"String a", "a", 97, 81, false},
		{"String hello", "hello", 99162322, 35, false},
		{"String flink", "flink", 97520992, 98, false},
		{"String ü", "ü", 252, 41, false},
		{"String 😀", "😀", 1772899, 54, false},
		{"Boolean true", true, 1231, 77, false},
		{"Boolean false", false, 1237, 3, false},
		{"Double 1.0", 1.0, 1072693248, 71, false},
		{"Double -0.0", math.Copysign(0, -1), -2147483648, 108, false},
		{"Double NaN", math.NaN(), 2146959360, 41, false},
		{"Float 1.0", float32(1.0), 1065353216, 48, false},
		{"Float NaN", float32(math.NaN()), 2143289344, 83, false},
		{"Tuple2(1, a)", Tuple{int32(1), "a"}, 128, 41, false},
		{"Row.of(1, a)", Row{Kind: Insert, Fields: []any{int32(1), "a"}}, 2081, 91, false},
		{"BinaryRowData(INT 42)", BinaryRow{0, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 0, 0, 0, 0}, 907821237, 69, false},
		{"BinaryRowData(BIGINT 7)", BinaryRow{0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0}, -348168691, 4, false},
		{"EMPTY_ROW", BinaryRow{0, 0, 0, 0, 0, 0, 0, 0}, -1670924195, 11, false},
	}
	for _, tc := range cases {
		h, err := HashCode(tc.key)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if h != tc.hash {
			t.Errorf("%s: hashCode = %d, want %d", tc.name, h, tc.hash)
		}
		kg, err := ForKey(tc.key, 128)
		if err != nil || kg != tc.kg {
			t.Errorf("%s: key group = %d, %v; want %d", tc.name, kg, err, tc.kg)
		}
	}
}

func TestMurmurHash(t *testing.T) {
	for _, tc := range []struct{ in, want int32 }{
		{0, 593689054}, {1, 68075478}, {42, 1134849565}, {-1, 1982413648}, {math.MinInt32, 1718298732},
	} {
		if got := MurmurHash(tc.in); got != tc.want {
			t.Errorf("MurmurHash(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
	// int 42 at other max parallelisms (guide §A.8).
	if got := ForHash(42, 256); got != 29 {
		t.Errorf("ForHash(42, 256) = %d, want 29", got)
	}
	if got := ForHash(42, 32768); got != 28189 {
		t.Errorf("ForHash(42, 32768) = %d, want 28189", got)
	}
}

// Values printed by Flink 2.3.0's KeyGroupRangeAssignment.computeDefaultMaxParallelism.
func TestDefaultMaxParallelism(t *testing.T) {
	for _, tc := range []struct{ p, want int32 }{
		{1, 128}, {85, 128}, {86, 256}, {100, 256}, {171, 256}, {1000, 2048}, {21845, 32768}, {21846, 32768}, {32768, 32768},
	} {
		got, err := DefaultMaxParallelism(tc.p)
		if err != nil || got != tc.want {
			t.Errorf("DefaultMaxParallelism(%d) = %d, %v; want %d", tc.p, got, err, tc.want)
		}
	}
	for _, p := range []int32{0, -1, 32769} {
		if _, err := DefaultMaxParallelism(p); err == nil {
			t.Errorf("DefaultMaxParallelism(%d): want an error", p)
		}
	}
}

func TestRanges(t *testing.T) {
	// Ranges printed by Flink 2.3.0's computeKeyGroupRangeForOperatorIndex.
	for _, tc := range []struct {
		maxP, p, i int32
		want       Range
	}{
		{128, 3, 0, Range{0, 42}}, {128, 3, 1, Range{43, 85}}, {128, 3, 2, Range{86, 127}},
		{32768, 7, 6, Range{28087, 32767}}, {1000, 999, 998, Range{999, 999}},
	} {
		got, err := RangeForOperator(tc.maxP, tc.p, tc.i)
		if err != nil || got != tc.want {
			t.Errorf("RangeForOperator(%d, %d, %d) = %v, %v; Flink says %v", tc.maxP, tc.p, tc.i, got, err, tc.want)
		}
	}
	for kg, sub := range map[int32]int32{42: 0, 43: 1, 85: 1, 86: 2} {
		if got := OperatorIndex(128, 3, kg); got != sub {
			t.Errorf("OperatorIndex(128, 3, %d) = %d, want %d", kg, got, sub)
		}
	}
	// Ranges and OperatorIndex agree for every key group, for a spread of shapes.
	for _, shape := range [][2]int32{{128, 1}, {128, 7}, {128, 128}, {256, 100}, {32768, 3}, {1000, 999}} {
		maxP, p := shape[0], shape[1]
		next := int32(0)
		for i := int32(0); i < p; i++ {
			r, err := RangeForOperator(maxP, p, i)
			if err != nil {
				t.Fatal(err)
			}
			if r.Start != next {
				t.Fatalf("maxP %d p %d: subtask %d starts at %d, want %d", maxP, p, i, r.Start, next)
			}
			for kg := r.Start; kg <= r.End; kg++ {
				if got := OperatorIndex(maxP, p, kg); got != i {
					t.Fatalf("maxP %d p %d: key group %d -> subtask %d, range says %d", maxP, p, kg, got, i)
				}
			}
			next = r.End + 1
		}
		if next != maxP {
			t.Fatalf("maxP %d p %d: ranges end at %d", maxP, p, next)
		}
	}
	if _, err := RangeForOperator(4, 8, 0); err == nil {
		t.Error("max parallelism below parallelism: want an error")
	}
}

func TestHashCodeRefuses(t *testing.T) {
	for _, k := range []any{nil, 3, uint64(1), []string{"a"}, BinaryRow{1, 2, 3}} {
		if _, err := HashCode(k); err == nil {
			t.Errorf("HashCode(%#v): want an error", k)
		}
	}
}

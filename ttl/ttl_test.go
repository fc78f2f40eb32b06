package ttl

import (
	"sort"
	"testing"
)

func TestTTLCompareNeverIsLargest(t *testing.T) {
	cases := []struct {
		a, b TTL
		want int
	}{
		{Never, Never, 0},
		{Never, 1, 1},
		{1, Never, -1},
		{TTL(1 << 62), Never, -1},
		{1000, 2000, -1},
		{2000, 1000, 1},
		{5, 5, 0},
	}
	for _, tc := range cases {
		if got := tc.a.Compare(tc.b); got != tc.want {
			t.Errorf("%v.Compare(%v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	s := []TTL{Never, 3600000, 1, Never, 86400000}
	sort.Slice(s, func(i, j int) bool { return s[i].Compare(s[j]) < 0 })
	want := []TTL{1, 3600000, 86400000, Never, Never}
	for i := range s {
		if s[i] != want[i] {
			t.Fatalf("sorted %v, want %v", s, want)
		}
	}
}

func TestTTLStringAndText(t *testing.T) {
	cases := []struct {
		ms          TTL
		text, human string
	}{
		{0, "0 ms", "never"},
		{1, "1 ms", "1ms"},
		{1500, "1500 ms", "1.5s"},
		{60000, "1 min", "1m"},
		{5400000, "90 min", "1h30m"},
		{3600000, "1 h", "1h"},
		{86400000, "1 d", "1d"},
		{90061000, "90061 s", "1d1h1m1s"},
		{90061250, "90061250 ms", "1d1h1m1.25s"},
	}
	for _, tc := range cases {
		if g := tc.ms.Text(); g != tc.text {
			t.Errorf("TTL(%d).Text() = %q, want %q", tc.ms, g, tc.text)
		}
		if g := tc.ms.String(); g != tc.human {
			t.Errorf("TTL(%d).String() = %q, want %q", tc.ms, g, tc.human)
		}
	}
}

func TestParseInput(t *testing.T) {
	cases := []struct {
		in      string
		want    TTL
		wantErr bool
	}{
		{"never", Never, false},
		{"NEVER", Never, false},
		{"0", Never, false},
		{"0 ms", Never, false},
		{"1h", 3600000, false},
		{"1 h", 3600000, false},
		{"90m", 5400000, false},
		{"90 min", 5400000, false},
		{"1h30m", 5400000, false},
		{"2d12h", 216000000, false},
		{"1.5h", 5400000, false},
		{"500ms", 500, false},
		{"3600000", 3600000, false},
		{"3600000 ms", 3600000, false},
		{"PT1H", 3600000, false},
		{"1 d", 86400000, false},
		{"1500us", 0, true}, // sub-millisecond: Flink would apply 1 ms
		{"1 ns", 0, true},   // would truncate to 0 = never
		{"-1h", 0, true},
		{"", 0, true},
		{"soon", 0, true},
		{"1h30", 0, true},
		{"1x", 0, true},
		{"9223372036854775808", 0, true},
	}
	for _, tc := range cases {
		got, err := ParseInput(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseInput(%q) = %v, %v; want %v, error %v", tc.in, int64(got), err, int64(tc.want), tc.wantErr)
		}
	}
}

func TestParseFlinkTTLOverflowIsError(t *testing.T) {
	if _, _, err := ParseFlinkTTL("9223372036854775807 s"); err == nil {
		t.Fatal("a TTL whose milliseconds overflow must be refused: Flink throws when it applies it")
	}
	if v, _, err := ParseFlinkTTL("1 ns"); err != nil || v != Never {
		t.Fatalf("ParseFlinkTTL(1 ns) = %v, %v; Flink truncates to 0 ms", v, err)
	}
}

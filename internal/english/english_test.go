package english

import "testing"

func TestCount(t *testing.T) {
	cases := []struct {
		n    int
		noun string
		want string
	}{
		{0, "error", "0 errors"},
		{1, "error", "1 error"},
		{2, "argument", "2 arguments"},
		{1, "state entry", "1 state entry"},
		{3, "state entry", "3 state entries"},
		{2, "key", "2 keys"},
		{2, "class", "2 classes"},
		{5, "state file", "5 state files"},
	}
	for _, c := range cases {
		if got := Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

func TestA(t *testing.T) {
	cases := map[string]string{"aggregating": "an aggregating", "value": "a value", "list": "a list", "map": "a map",
		"reducing": "a reducing", "Integer": "an Integer", "": "a "}
	for in, want := range cases {
		if got := A(in); got != want {
			t.Errorf("A(%q) = %q, want %q", in, got, want)
		}
	}
}

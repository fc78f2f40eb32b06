package stats

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestTopHeapKeepsTheLargest(t *testing.T) {
	for _, c := range []struct {
		name  string
		max   int
		offer map[string]int64
		want  []string
	}{
		{"none kept", 0, map[string]int64{`1`: 5}, []string{}},
		{"fewer than max", 3, map[string]int64{`1`: 5, `2`: 7}, []string{`2`, `1`}},
		{"largest of many", 2, map[string]int64{`1`: 5, `2`: 7, `3`: 1, `4`: 9, `5`: 6}, []string{`4`, `2`}},
		{"ties by key", 2, map[string]int64{`"b"`: 4, `"a"`: 4, `"c"`: 4}, []string{`"a"`, `"b"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := topHeap{max: c.max}
			for k, b := range c.offer {
				h.offer(k, keyTotal{bytes: b, entries: 1})
			}
			got := []string{}
			for _, k := range h.sorted() {
				got = append(got, string(k.Key))
				if !json.Valid(k.Key) {
					t.Errorf("key %q is not JSON", k.Key)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestSkew(t *testing.T) {
	for _, c := range []struct {
		bytes []int64
		want  float64
	}{
		{nil, 0},
		{[]int64{0, 0}, 0},
		{[]int64{5, 5, 5}, 1},
		{[]int64{10, 0, 0, 0}, 4},
		{[]int64{3, 1}, 1.5},
	} {
		var gs []Group
		for i, b := range c.bytes {
			gs = append(gs, Group{Index: i, Bytes: b})
		}
		if got := skew(gs); got != c.want {
			t.Errorf("skew(%v) = %v, want %v", c.bytes, got, c.want)
		}
	}
}

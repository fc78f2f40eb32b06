package migrate

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestParallel(t *testing.T) {
	cases := []struct {
		name    string
		n       int
		failing []int // tasks that fail
		want    string
	}{
		{"none fails", 50, nil, ""},
		{"one task", 1, []int{0}, "task 0"},
		{"lowest of several", 40, []int{31, 7, 12}, "task 7"},
		{"last", 9, []int{8}, "task 8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for round := 0; round < 20; round++ {
				var ran atomic.Int64
				fail := map[int]bool{}
				for _, f := range c.failing {
					fail[f] = true
				}
				err := parallel(c.n, func(i int) error {
					ran.Add(1)
					if i%3 == 0 {
						time.Sleep(50 * time.Microsecond) // vary the interleaving
					}
					if fail[i] {
						return fmt.Errorf("task %d", i)
					}
					return nil
				})
				got := ""
				if err != nil {
					got = err.Error()
				}
				if got != c.want {
					t.Fatalf("round %d: error %q, want %q", round, got, c.want)
				}
				if c.want == "" && ran.Load() != int64(c.n) {
					t.Fatalf("round %d: %d of %d tasks ran", round, ran.Load(), c.n)
				}
			}
		})
	}
	if err := parallel(0, func(int) error { return errors.New("no task may run") }); err != nil {
		t.Errorf("no tasks: %v", err)
	}
}

package keyed

import (
	"errors"
	"fmt"
	"testing"
)

// TestPipelined: entries reach the consumer in order with their own bytes although the producer
// reuses one buffer, and an error of either side ends the run with that error.
func TestPipelined(t *testing.T) {
	errProduce, errConsume := errors.New("produce failed"), errors.New("consume failed")
	const n = 3*batchEntries + 17 // several full batches and a partial one
	tests := []struct {
		name      string
		failAt    int // producer fails before entry failAt (-1: never)
		stopAt    int // consumer fails at entry stopAt (-1: never)
		want      error
		wantCount int
	}{
		{"all", -1, -1, nil, n},
		{"producer error", batchEntries + 5, -1, errProduce, batchEntries + 5},
		{"consumer error", -1, 2*batchEntries + 1, errConsume, 2*batchEntries + 1},
		{"consumer stops in the first batch", -1, 3, errConsume, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			buf := make([]byte, 0, 64)
			produce := func(fn func(*Entry) error) error {
				for i := range n {
					if i == tc.failAt {
						return errProduce
					}
					buf = fmt.Appendf(buf[:0], "key-%d", i)
					e := Entry{KeyGroup: i % 128, StateID: i % 3, Key: buf[:len(buf):len(buf)], Value: []byte(fmt.Sprint(i * 7)), Offset: -1}
					if err := fn(&e); err != nil {
						return err
					}
				}
				return nil
			}
			got := 0
			err := pipelined(produce, func(e *Entry) error {
				if got == tc.stopAt {
					return errConsume
				}
				if string(e.Key) != fmt.Sprintf("key-%d", got) || string(e.Value) != fmt.Sprint(got*7) || e.KeyGroup != got%128 || e.StateID != got%3 || e.Offset != -1 {
					t.Fatalf("entry %d: got key %q value %q kg %d state %d", got, e.Key, e.Value, e.KeyGroup, e.StateID)
				}
				got++
				return nil
			})
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if got != tc.wantCount {
				t.Fatalf("%d entries consumed, want %d", got, tc.wantCount)
			}
		})
	}
}

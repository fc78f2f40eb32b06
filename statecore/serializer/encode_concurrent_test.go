package serializer

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// TestEncoderConcurrent: savepoint create's workers share one encoder per state. The List and
// object-array encoders once assigned the error variable of the function that built them, a
// data race (go test -race fails on it) that could hand one worker's error, or nil, to another.
// Every worker here must get its own bytes and its own error.
func TestEncoderConcurrent(t *testing.T) {
	for _, tc := range []struct {
		typ       string
		good, bad string // the bad value's element 1 is refused
		badPath   string
	}{
		{"List<Long>", `[1, 2, 3]`, `[1, "x", 3]`, "v[1]"},
		{"Integer[]", `[1, null, 3]`, `[1, "x", 3]`, "v[1]"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			snap, err := Declare(tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := NewEncoder(snap)
			if err != nil {
				t.Fatal(err)
			}
			decode := func(s string) any {
				d := json.NewDecoder(strings.NewReader(s))
				d.UseNumber()
				var v any
				if err := d.Decode(&v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			good, bad := decode(tc.good), decode(tc.bad)
			want, err := enc(nil, good, "v")
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan string, 64)
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 200 {
						if w%2 == 0 {
							got, err := enc(nil, good, "v")
							if err != nil || !bytes.Equal(got, want) {
								errs <- "good value: " + string(got) + " " + errString(err)
								return
							}
						} else if _, err := enc(nil, bad, "v"); err == nil || !strings.HasPrefix(err.Error(), tc.badPath) {
							errs <- "bad value: " + errString(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

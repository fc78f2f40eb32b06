package keyed

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// TestOpaqueNamespaceMapSplit: map state under a namespace whose serializer is unknown (the
// oracle's SlotWindow, an i64 behind a SimpleTypeSerializerSnapshot) over Integer keys and String
// user keys, in the native savepoint Flink wrote (testdata/savepoints-refused/
// native-slot-window-fired: the per-window map state "fired" of a window function). Every entry
// whose key splits one way only into namespace and user key decodes to exactly the State
// Processor API's entry; one that splits two ways (slot 4, then "n1": 00..04 03 6E 31 also reads
// as 7 namespace bytes and the String "\x03n1") is an error saying the split cannot be told. The
// fixture holds both, or the test proves nothing.
func TestOpaqueNamespaceMapSplit(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "savepoints-refused", "native-slot-window-fired")
	raw, err := os.ReadFile(dir + ".expect.json")
	if err != nil {
		t.Fatal(err)
	}
	var exp struct {
		Operators []struct {
			KeyedStates []struct {
				Name    string
				Entries []struct {
					Key       json.RawMessage
					Namespace struct{ Base64 string }
					UserKey   any
					Value     json.RawMessage
				}
			}
		}
	}
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, op := range exp.Operators {
		for _, ks := range op.KeyedStates {
			for _, e := range ks.Entries {
				if ks.Name == "fired" {
					want[fmt.Sprint(string(e.Key), "|", e.Namespace.Base64, "|", e.UserKey, "|", string(e.Value))] = true
				}
			}
		}
	}
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	decoded, ambiguous := 0, 0
	for _, op := range sp.Metadata.Operators {
		subs, closeAll, err := OpenSubtasks(sp, op)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subs {
			err := s.Entries(func(e *Entry) error {
				if s.Decoder.States[e.StateID].Meta.Name != "fired" {
					return nil
				}
				r, err := s.Decoder.Decode(e)
				switch {
				case err != nil && strings.Contains(err.Error(), "SlotWindow$Snapshot is unknown") && strings.Contains(err.Error(), "cannot be told"):
					ambiguous++
				case err != nil:
					t.Errorf("%s: %v", s.Name, err)
				default:
					ns, _ := r.Namespace.(serializer.Opaque)
					got := fmt.Sprint(r.Key, "|", base64.StdEncoding.EncodeToString(ns.Base64), "|", r.UserKey, "|", r.Value)
					if !want[got] {
						t.Errorf("%s: entry %s is not the State Processor API's", s.Name, got)
					}
					decoded++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		closeAll()
	}
	t.Logf("%d map entries decoded, %d refused as splitting two ways, of %d", decoded, ambiguous, len(want))
	if decoded == 0 || ambiguous == 0 || decoded+ambiguous != len(want) {
		t.Errorf("%d decoded + %d refused, want both and %d in all", decoded, ambiguous, len(want))
	}
}

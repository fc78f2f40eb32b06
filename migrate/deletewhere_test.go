package migrate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rec is a dumped record as deletion rules read it.
type rec struct {
	State   string
	Key     any
	UserKey any
	Value   any
	TTL     any `json:"ttlTimestamp"`
}

func num(v any) float64 {
	n, _ := v.(float64)
	return n
}

// TestDeleteWhere: the output holds exactly the source's records but those each case's rule
// (written out here on the decoded record) removes, and the report counts them.
func TestDeleteWhere(t *testing.T) {
	cases := []struct {
		fixture string
		where   []string
		gone    func(r rec) bool
	}{
		{"keyed-ttl-collections", []string{"plain: value >= 37"}, func(r rec) bool { return r.State == "plain" && num(r.Value) >= 37 }},
		{"keyed-ttl-collections", []string{`attrs: userKey == "a1"`, "plain: key < 2"}, func(r rec) bool {
			return r.State == "attrs" && r.UserKey == "a1" || r.State == "plain" && num(r.Key) < 2
		}},
		{"keyed-ttl-collections", []string{"attrs: ttlTimestamp <= 1796012620445"}, func(r rec) bool { return r.State == "attrs" && num(r.TTL) <= 1796012620445 }},
		{"keyed-ttl-collections", []string{"recent: value.0 != \"r4\""}, func(r rec) bool {
			return r.State == "recent" && r.Value.([]any)[0] != "r4"
		}},
		{"types-hashmap", []string{"score: key.f0 == 3", `account: value.balance > 117`, `pair: value.f1 != "nope"`}, func(r rec) bool {
			switch r.State {
			case "score":
				return num(r.Key.(map[string]any)["f0"]) == 3
			case "account":
				return num(r.Value.(map[string]any)["balance"]) > 117
			}
			return r.State == "pair"
		}},
		{"types-hashmap", []string{`last: value < "v37"`}, func(r rec) bool {
			s, ok := r.Value.(string)
			return r.State == "last" && ok && s < "v37"
		}},
	}
	for _, c := range cases {
		t.Run(c.fixture+"/"+strings.Join(c.where, ","), func(t *testing.T) {
			src := fixture(t, c.fixture)
			step, err := NewPatchSteps("", c.where, nil)
			if err != nil {
				t.Fatal(err)
			}
			dst, rep := run(t, src, Options{}, step)
			var want []string
			gone := map[string]int{}
			for _, l := range dumpKeyed(t, src) {
				var r rec
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatal(err)
				}
				if c.gone(r) {
					gone[r.State]++
					continue
				}
				want = append(want, l)
			}
			if len(gone) == 0 || len(want) == 0 {
				t.Fatalf("the rule removes %d states' records and keeps %d: the case proves little", len(gone), len(want))
			}
			got := dumpKeyed(t, dst)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("%d records left, want %d", len(got), len(want))
			}
			reported := map[string]int{}
			for _, op := range rep.Steps[0].Operators {
				for st, n := range op.Deleted {
					reported[st] += n
				}
			}
			for st, n := range gone {
				if reported[st] != n {
					t.Errorf("state %s: report says %d deleted, %d were", st, reported[st], n)
				}
			}
		})
	}
}

// TestScriptPatch: a script's patch step sets the data file's records, then deletes where its
// predicates hold (so a record the data sets can be deleted by a predicate).
func TestScriptPatch(t *testing.T) {
	src := fixture(t, "keyed-ttl-collections")
	dir := t.TempDir()
	data := filepath.Join(dir, "fix.jsonl")
	os.WriteFile(data, []byte(`{"operator":"uid:ttl-collections","state":"plain","key":0,"namespace":null,"value":1000}`+"\n"), 0o644)
	script := "steps:\n  - patch:\n      data: " + data + "\n      delete-where: [\"plain: value >= 37\"]\n      operators: [\"uid:ttl-collections\"]\n"
	steps, err := ParseScript(strings.NewReader(script), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Not run(): a dry run reads the source's entries in every step, so its delete-where counts
	// differ from the real run's (which sees the data's records applied).
	dst := filepath.Join(dir, "out")
	if _, err := Run(src, dst, steps, Options{}); err != nil {
		t.Fatal(err)
	}
	var plain []string
	for _, l := range dumpKeyed(t, dst) {
		if strings.Contains(l, `"state":"plain"`) {
			plain = append(plain, l)
		}
	}
	if len(plain) != 1 || !strings.Contains(plain[0], `"key":1,`) || !strings.Contains(plain[0], `"value":36`) {
		t.Fatalf("plain after the patch step: %v, want only key 1 (36): key 0 set to 1000, then >= 37 deleted", plain)
	}
}

// TestDeleteWhereRefusals: a predicate that cannot be read, or cannot hold for the state it
// names, is one error naming it, and nothing is written.
func TestDeleteWhereRefusals(t *testing.T) {
	src := fixture(t, "keyed-ttl-collections")
	for _, tc := range []struct{ where, want string }{
		{"plain value == 3", "want STATE: FIELD before =="},
		{"plain: size == 3", `field "size": want key`},
		{"plain: value ~ 3", "want STATE: FIELD OP LITERAL"},
		{"plain: value == [1]", "want null, true, false, a number or a string"},
		{"plain: value == nope", "literal \"nope\""},
		{"nope: value == 3", `no selected operator has a keyed state "nope"`},
		{"plain: ttlTimestamp < 3", `state "plain" is not stored with TTL`},
		{"plain: userKey == 3", "only map states have a userKey"},
		{"_timer_state/event_user-timers: key == 3", "timers are not deleted by predicate"},
	} {
		t.Run(tc.where, func(t *testing.T) {
			step, err := NewPatchSteps("", []string{tc.where}, nil)
			if err == nil {
				dst := filepath.Join(t.TempDir(), "out")
				_, err = Run(src, dst, []Step{step}, Options{})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

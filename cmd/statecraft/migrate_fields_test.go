package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// stateValues decodes one keyed state of the only operator of the savepoint at dir and returns
// its values as JSON.
func stateValues(t *testing.T, dir, state string) []string {
	t.Helper()
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var out []string
	for _, op := range sp.Metadata.Operators {
		subs, closeAll, err := keyed.OpenSubtasks(sp, op)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range subs {
			if err := st.Records(func(s string) bool { return s == state }, func(r keyed.Record) error {
				b, _ := json.Marshal(r.Value)
				out = append(out, string(b))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		closeAll()
	}
	return out
}

// TestMigrateRetypeFieldFlags: --drop-field, --add-field and --class, given after the
// positional arguments, change a Row and a POJO state of the evolve fixture.
func TestMigrateRetypeFieldFlags(t *testing.T) {
	src := migrateFixture(t, "evolve-hashmap")
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
		state  string
		value  string // a substring every value of state has (JSON)
	}{
		{"pojo: class, drop, add after positionals", []string{"migrate", "retype", src, "DST", "--operator", "uid:evolve", "--state", "account",
			"--class", "dev.statecraft.oracle.savepoints.AccountV2", "--drop-field", "version", "--add-field", "tier:String=gold"}, 0,
			"Account{balance, owner, version} -> dev.statecraft.oracle.savepoints.AccountV2{balance, owner, tier}", "", "account", `"tier":"gold"}`},
		{"row: comma list of drops, quoted default with a comma", []string{"migrate", "retype", src, "DST", "--drop-field", "f0,f1",
			"--add-field", `f0:String="a, b"`, "--add-field", "f1:Long=null", "--operator", "uid:evolve", "--state", "profile"}, 0,
			"Row<String,Integer> -> Row<String,Long>", "", "profile", `["a, b",null]`},
		{"row: flags first, insert in front", []string{"migrate", "retype", "--operator", "uid:evolve", "--state", "scores", "--add-field", "f0:Boolean=true", src, "DST"}, 0,
			"Row<Long,Double> -> Row<Boolean,Long,Double>", "", "scores", `[true,`},
		{"bad --add-field", []string{"migrate", "retype", src, "DST", "--operator", "uid:evolve", "--state", "profile", "--add-field", "f2:Long"}, 1,
			"", "--add-field: new field \"f2:Long\": give a default", "", ""},
		{"unknown POJO field", []string{"migrate", "retype", src, "DST", "--operator", "uid:evolve", "--state", "account", "--drop-field", "tier"}, 1,
			"", `drop field "tier": POJO dev.statecraft.oracle.savepoints.Account has no such field`, "", ""},
		{"wrong default type", []string{"migrate", "retype", src, "DST", "--operator", "uid:evolve", "--state", "profile", "--add-field", "f2:Integer=x"}, 1,
			"", `state "profile": new field "f2": default "x" is not a literal of type Integer`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out")
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "DST", dst)
			}
			runMigrate(t, args, dst, c.code, c.stdout, c.stderr)
			if c.code != 0 {
				return
			}
			vals := stateValues(t, dst, c.state)
			if len(vals) == 0 {
				t.Fatalf("no %s values in the output", c.state)
			}
			for _, v := range vals {
				if !strings.Contains(v, c.value) {
					t.Errorf("%s value %s lacks %s", c.state, v, c.value)
				}
			}
		})
	}
}

package migrate

import (
	"strings"
	"testing"
)

// TestScriptExample: the reference script parses, and shows every step kind and every field of
// each, so `statecraft help scripts` cannot fall behind the parser.
func TestScriptExample(t *testing.T) {
	steps, err := ParseScript(strings.NewReader(ScriptExample), "ScriptExample")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < len(StepKinds()) {
		t.Errorf("%d steps for %d kinds", len(steps), len(StepKinds()))
	}
	for _, kind := range StepKinds() {
		if !strings.Contains(ScriptExample, "- "+kind+":") {
			t.Errorf("ScriptExample has no %s step", kind)
		}
		fields, _ := StepFields(kind)
		for _, f := range fields {
			if !strings.Contains(ScriptExample, f+":") {
				t.Errorf("ScriptExample does not show field %s of %s", f, kind)
			}
		}
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/uid"
)

func TestPlanUIDsCLI(t *testing.T) {
	_, planFile := sqlSavepoint(t)
	code, out, errs := runCLI("plan", "uids", planFile)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// The UIDs and hashes Flink recorded in the savepoint (savepoint_metadata rows).
	for _, want := range []string{
		"1     stream-exec-table-source-scan_2  source                1_source                d3f21cabc6fe0fdf76c8be915bdb22a2",
		"2     stream-exec-exchange_1           exchange              2_exchange              ec76b2a2669fa43916b35a12eb169129  partition",
		"3     stream-exec-group-aggregate_1    group-aggregate       3_group-aggregate       4f0fea56069e128b6efb5cf69722457e  state",
		"4     stream-exec-sink_2               sink                  4_sink                  3a16aff6d1991cf4b79bdba575de154c",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI("plan", "uids", "--json", "--uid-format", "<id>_<type>_<version>_<transformation>", planFile)
	var r struct {
		UIDFormat string `json:"uidFormat"`
		Nodes     []struct {
			ID              int `json:"id"`
			Transformations []struct {
				UID  string `json:"uid"`
				Hash string `json:"uidHash"`
			} `json:"transformations"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &r); code != exitOK || err != nil {
		t.Fatalf("--json: exit %d, %v:\n%s", code, err, out)
	}
	if len(r.Nodes) != 4 || r.Nodes[2].Transformations[0].UID != "3_stream-exec-group-aggregate_1_group-aggregate" ||
		r.Nodes[2].Transformations[0].Hash != uid.Hash("3_stream-exec-group-aggregate_1_group-aggregate") {
		t.Errorf("--json 1.15 format: %+v", r)
	}
	// Errors.
	code, out, errs = runCLI("plan", "uids", "--uid-format", "x", planFile)
	if code != exitFindings || !strings.Contains(errs, "Hash collision") {
		t.Errorf("colliding format: exit %d, %s", code, errs)
	}
	code, _, errs = runCLI("plan", "uids", planFile, "--uid-generation", "nope")
	if code != exitFailure || !strings.Contains(errs, "--uid-generation") {
		t.Errorf("bad generation: exit %d, %s", code, errs)
	}
	code, _, errs = runCLI("plan", "uids")
	if code != exitFailure || !strings.Contains(errs, "want exactly one PLAN") {
		t.Errorf("no plan: exit %d, %s", code, errs)
	}
}

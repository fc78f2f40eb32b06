package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// compareNodes lists what differs between a matched OLD and NEW node, member by member in
// OLD's order (then members only NEW has). The node id is not compared here: a renumbering is
// reported by the caller, which knows what it does to the UID.
func compareNodes(o, n *Node) []FieldChange {
	out := []FieldChange{}
	if o.Raw == n.Raw || withoutID(o.Raw) == withoutID(n.Raw) {
		return out // same bytes, perhaps but the id
	}
	om, nm := members(o.Raw), members(n.Raw)
	keys := make([]string, 0, len(om.keys)+2)
	keys = append(keys, om.keys...)
	for _, k := range nm.keys {
		if _, ok := om.vals[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		a, b := om.vals[k], nm.vals[k]
		switch k {
		case "id":
		case "type":
			switch {
			case o.Name != n.Name:
				out = append(out, FieldChange{Kind: "type", Path: "type", Old: o.Type, New: n.Type,
					Detail: fmt.Sprintf("exec node %s -> %s", o.Name, n.Name)})
			case o.Version != n.Version:
				out = append(out, FieldChange{Kind: "version", Path: "type", Old: o.Type, New: n.Type,
					Detail: fmt.Sprintf("_%d -> _%d", o.Version, n.Version)})
			}
		case "description":
			if o.Description != n.Description {
				out = append(out, FieldChange{Kind: "description", Path: k, Old: o.Description, New: n.Description})
			}
		case "outputType":
			if ca, cb := compactJSON(a.Raw), compactJSON(b.Raw); ca != cb {
				out = append(out, FieldChange{Kind: "output-type", Path: k, Old: typeText(a), New: typeText(b), Detail: rowTypeDetail(a, b)})
			}
		case "state":
			out = append(out, compareState(o, n)...)
		case "configuration":
			out = append(out, compareConfig(a, b)...)
		default:
			diffValues(k, a, b, &out)
		}
	}
	// The row type of input k is the output type of the node feeding it.
	for k := 0; k < min(len(o.Inputs), len(n.Inputs)); k++ {
		os, ns := o.owner.byID[o.Inputs[k].Source], n.owner.byID[n.Inputs[k].Source]
		if os == nil || ns == nil {
			continue
		}
		a, b := nodeMember(os, "outputType"), nodeMember(ns, "outputType")
		if compactJSON(a.Raw) != compactJSON(b.Raw) {
			out = append(out, FieldChange{Kind: "input-type", Path: fmt.Sprintf("input.%d", k), Old: typeText(a), New: typeText(b), Detail: rowTypeDetail(a, b)})
		}
	}
	return out
}

// typeText is a type as one line: the string Flink writes, or compact JSON for the object
// form some plans use.
func typeText(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return compactJSON(v.Raw)
}

// withoutID is a node's JSON text with its "id" value cut out, so that two nodes that differ
// only by id compare equal without parsing either.
func withoutID(raw string) string {
	v := gjson.Get(raw, "id")
	if !v.Exists() || v.Index <= 0 || v.Index+len(v.Raw) > len(raw) {
		return raw
	}
	return raw[:v.Index] + raw[v.Index+len(v.Raw):]
}

type memberList struct {
	keys []string
	vals map[string]gjson.Result
}

func members(raw string) memberList {
	ml := memberList{vals: map[string]gjson.Result{}}
	gjson.Parse(raw).ForEach(func(k, v gjson.Result) bool {
		if _, dup := ml.vals[k.Str]; !dup {
			ml.keys = append(ml.keys, k.Str)
			ml.vals[k.Str] = v
		}
		return true
	})
	return ml
}

// compareState pairs state entries by their "index" (the input they hold) and compares TTLs
// by value: "86400000 ms" and "1 d" are the same TTL.
//
// A "state" array on one side only is a plan from before Flink 1.18 (FLIP-292) against one
// from after: the operator's state is the same, only its TTL moves from the pipeline-wide
// table.exec.state.ttl into the plan. That is reported as a TTL change, per entry.
func compareState(o, n *Node) []FieldChange {
	var out []FieldChange
	if o.HasState != n.HasState {
		side, entries := "NEW", n.State
		if o.HasState {
			side, entries = "OLD", o.State
		}
		for _, s := range entries {
			c := FieldChange{Kind: "ttl", Path: fmt.Sprintf("state.%d.ttl", s.Index),
				Detail: fmt.Sprintf("%s: per-operator TTL %s only in %s (the other plan predates Flink 1.18 and uses table.exec.state.ttl)", s.Name, s.TTLText, side)}
			if o.HasState {
				c.Old = s.TTLText
			} else {
				c.New = s.TTLText
			}
			out = append(out, c)
		}
		return out
	}
	byIndex := func(ss []*StateEntry) map[int]*StateEntry {
		m := map[int]*StateEntry{}
		for _, s := range ss {
			if _, dup := m[s.Index]; !dup {
				m[s.Index] = s
			}
		}
		return m
	}
	om, nm := byIndex(o.State), byIndex(n.State)
	for _, s := range o.State {
		t := nm[s.Index]
		if om[s.Index] != s {
			continue
		}
		path := fmt.Sprintf("state.%d", s.Index)
		if t == nil {
			out = append(out, FieldChange{Kind: "state", Path: path, Old: s.Name, Detail: fmt.Sprintf("state %q removed", s.Name)})
			continue
		}
		if s.Name != t.Name {
			out = append(out, FieldChange{Kind: "state", Path: path + ".name", Old: s.Name, New: t.Name, Detail: fmt.Sprintf("state renamed %q -> %q", s.Name, t.Name)})
		}
		switch {
		case s.TTLErr == nil && t.TTLErr == nil:
			if s.TTL != t.TTL {
				a, b := s.TTL.Millis(), t.TTL.Millis()
				out = append(out, FieldChange{Kind: "ttl", Path: path + ".ttl", Old: s.TTLText, New: t.TTLText,
					Detail: fmt.Sprintf("%s: %s -> %s", t.Name, s.TTL, t.TTL), OldMillis: &a, NewMillis: &b})
			}
		case s.TTLText != t.TTLText:
			out = append(out, FieldChange{Kind: "ttl", Path: path + ".ttl", Old: s.TTLText, New: t.TTLText,
				Detail: fmt.Sprintf("%s: %q -> %q (not both valid Flink durations)", t.Name, s.TTLText, t.TTLText)})
		}
	}
	for _, t := range n.State {
		if nm[t.Index] == t && om[t.Index] == nil {
			out = append(out, FieldChange{Kind: "state", Path: fmt.Sprintf("state.%d", t.Index), New: t.Name, Detail: fmt.Sprintf("state %q added", t.Name)})
		}
	}
	return out
}

// compareConfig compares "configuration" option by option.
func compareConfig(a, b gjson.Result) []FieldChange {
	var out []FieldChange
	am, bm := members(a.Raw), members(b.Raw)
	if !a.Exists() {
		am = memberList{vals: map[string]gjson.Result{}}
	}
	if !b.Exists() {
		bm = memberList{vals: map[string]gjson.Result{}}
	}
	keys := append([]string(nil), am.keys...)
	for _, k := range bm.keys {
		if _, ok := am.vals[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		x, y := am.vals[k], bm.vals[k]
		if x.Exists() && y.Exists() && compactJSON(x.Raw) == compactJSON(y.Raw) {
			continue
		}
		kind := "config"
		if k == "table.exec.uid.format" {
			kind = "uid-format"
		}
		c := FieldChange{Kind: kind, Path: "configuration." + k, Old: x.String(), New: y.String()}
		switch {
		case !x.Exists():
			c.Detail = "option added"
		case !y.Exists():
			c.Detail = "option removed"
		}
		out = append(out, c)
	}
	return out
}

// maxLeafChanges bounds the changes listed for one member: past it, one summary change.
const maxLeafChanges = 20

// diffValues appends the differences between a and b under path, down to the first level
// where they differ as a whole: scalars, arrays of different lengths, members present on one
// side only.
func diffValues(path string, a, b gjson.Result, out *[]FieldChange) {
	var leaves []FieldChange
	walkDiff(path, a, b, &leaves)
	if len(leaves) > maxLeafChanges {
		*out = append(*out, FieldChange{Kind: category(path), Path: path, Old: compactJSON(a.Raw), New: compactJSON(b.Raw),
			Detail: fmt.Sprintf("%d values differ", len(leaves))})
		return
	}
	*out = append(*out, leaves...)
}

func walkDiff(path string, a, b gjson.Result, out *[]FieldChange) {
	if a.Exists() == b.Exists() && a.Raw == b.Raw {
		return
	}
	ca, cb := compactJSON(a.Raw), compactJSON(b.Raw)
	if a.Exists() == b.Exists() && ca == cb {
		return
	}
	switch {
	case a.IsObject() && b.IsObject():
		am, bm := members(a.Raw), members(b.Raw)
		for _, k := range am.keys {
			walkDiff(path+"."+k, am.vals[k], bm.vals[k], out)
		}
		for _, k := range bm.keys {
			if _, ok := am.vals[k]; !ok {
				walkDiff(path+"."+k, gjson.Result{}, bm.vals[k], out)
			}
		}
		return
	case a.IsArray() && b.IsArray():
		x, y := a.Array(), b.Array()
		if len(x) == len(y) && len(x) > 0 && (x[0].IsObject() || x[0].IsArray()) {
			for i := range x {
				walkDiff(fmt.Sprintf("%s.%d", path, i), x[i], y[i], out)
			}
			return
		}
	}
	c := FieldChange{Kind: category(path), Path: path, Old: ca, New: cb}
	switch {
	case !a.Exists():
		c.Detail = "added"
	case !b.Exists():
		c.Detail = "removed"
	}
	*out = append(*out, c)
}

// category files a member path under keys, changelog or field. Keys: hash distributions,
// grouping, join/upsert/unique/partition keys (any path component naming a key, grouping,
// partition or distribution). Changelog: changelog modes, update-before generation,
// retraction flags.
func category(path string) string {
	p := strings.ToLower(path)
	for _, w := range []string{"changelog", "updatebefore", "retract"} {
		if strings.Contains(p, w) {
			return "changelog"
		}
	}
	for _, part := range strings.Split(p, ".") {
		if strings.Contains(part, "key") || strings.Contains(part, "grouping") || strings.Contains(part, "partition") || strings.Contains(part, "distribution") {
			return "keys"
		}
	}
	return "field"
}

// sameJSON compares two JSON texts ignoring insignificant whitespace.
func sameJSON(a, b string) bool { return a == b || compactJSON(a) == compactJSON(b) }

// compactJSON removes insignificant whitespace so that values compare across formatting.
func compactJSON(raw string) string {
	if raw == "" {
		return ""
	}
	if !strings.ContainsAny(raw, " \n\t\r") {
		return raw
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return raw
	}
	return b.String()
}

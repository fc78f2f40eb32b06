package plan

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
)

// column is one field of a row type as Flink writes it in "outputType":
//
//	ROW<`order_id` BIGINT, `name` VARCHAR(2147483647) NOT NULL, `m` MAP<INT, ROW<`x` INT>>> NOT NULL
//	    \__name__/ \type_/
//
// Names are in backquotes (a doubled backquote stands for one); types may nest <...> and (...)
// and contain commas, so fields split only at depth 0 outside quotes. A field may carry a
// comment in single quotes after its type.
type column struct {
	Name string
	Type string
}

// parseRowType splits a "ROW<...>" type string into its fields; ok is false for anything
// else (an atomic type, or a JSON object as some older plans write).
func parseRowType(s string) ([]column, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(s, " NOT NULL")
	if !strings.HasPrefix(s, "ROW<") || !strings.HasSuffix(s, ">") {
		return nil, false
	}
	body := s[len("ROW<") : len(s)-1]
	var cols []column
	depth, start := 0, 0
	inName, inComment := false, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inName:
			if c == '`' {
				if i+1 < len(body) && body[i+1] == '`' {
					i++
				} else {
					inName = false
				}
			}
		case inComment:
			if c == '\'' {
				if i+1 < len(body) && body[i+1] == '\'' {
					i++
				} else {
					inComment = false
				}
			}
		case c == '`':
			inName = true
		case c == '\'':
			inComment = true
		case c == '<' || c == '(':
			depth++
		case c == '>' || c == ')':
			depth--
		case c == ',' && depth == 0:
			col, ok := parseColumn(body[start:i])
			if !ok {
				return nil, false
			}
			cols = append(cols, col)
			start = i + 1
		}
	}
	if inName || inComment || depth != 0 {
		return nil, false
	}
	if strings.TrimSpace(body[start:]) != "" {
		col, ok := parseColumn(body[start:])
		if !ok {
			return nil, false
		}
		cols = append(cols, col)
	}
	return cols, true
}

func parseColumn(f string) (column, bool) {
	f = strings.TrimSpace(f)
	if !strings.HasPrefix(f, "`") {
		return column{}, false
	}
	var name strings.Builder
	i := 1
	for ; i < len(f); i++ {
		if f[i] == '`' {
			if i+1 < len(f) && f[i+1] == '`' {
				name.WriteByte('`')
				i++
				continue
			}
			break
		}
		name.WriteByte(f[i])
	}
	if i >= len(f) {
		return column{}, false
	}
	return column{Name: name.String(), Type: strings.TrimSpace(f[i+1:])}, true
}

// rowTypeDetail says which columns were added, removed, retyped or reordered between two
// "outputType" values ("" when either is not a ROW type string).
func rowTypeDetail(a, b gjson.Result) string {
	if a.Type != gjson.String || b.Type != gjson.String {
		return ""
	}
	x, ok1 := parseRowType(a.Str)
	y, ok2 := parseRowType(b.Str)
	if !ok1 || !ok2 {
		if strings.TrimSuffix(a.Str, " NOT NULL") == strings.TrimSuffix(b.Str, " NOT NULL") {
			return "nullability changed"
		}
		return ""
	}
	return columnsDetail(x, y)
}

func columnsDetail(x, y []column) string {
	oldT := map[string]string{}
	newT := map[string]string{}
	for _, c := range x {
		oldT[c.Name] = c.Type
	}
	for _, c := range y {
		newT[c.Name] = c.Type
	}
	var parts []string
	var commonOld, commonNew []string
	for _, c := range x {
		if t, ok := newT[c.Name]; !ok {
			parts = append(parts, fmt.Sprintf("column %s removed", c.Name))
		} else {
			commonOld = append(commonOld, c.Name)
			if t != c.Type {
				parts = append(parts, fmt.Sprintf("column %s retyped %s -> %s", c.Name, c.Type, t))
			}
		}
	}
	for _, c := range y {
		if _, ok := oldT[c.Name]; !ok {
			parts = append(parts, fmt.Sprintf("column %s %s added", c.Name, c.Type))
		} else {
			commonNew = append(commonNew, c.Name)
		}
	}
	if strings.Join(commonOld, "\x00") != strings.Join(commonNew, "\x00") {
		parts = append(parts, fmt.Sprintf("columns reordered (%s) -> (%s)", strings.Join(commonOld, ", "), strings.Join(commonNew, ", ")))
	}
	if len(parts) == 0 {
		return "nullability changed"
	}
	return strings.Join(parts, "; ")
}

// aggCallName matches the output name of an aggregate call, at any depth (group, window and over
// aggregates).
var aggCallName = regexp.MustCompile(`(^|\.)aggCalls\.\d+\.name$`)

// intervalBound matches an interval join's time bounds.
var intervalBound = regexp.MustCompile(`^intervalJoinSpec\.windowBounds\.(left|right)(Lower|Upper)Bound$`)

// namesOnly says why a change of a stateful node cannot reach its state, "" when it may: the
// output name of an aggregate call, or output column names with every type unchanged. State
// serializers keep field types only (RowDataSerializer snapshots hold LogicalTypes, no names):
// Flink 2.3.0 restored the oracle's aggregate with renamed aliases and went on counting
// (testdata/upgrades/types/alias-changed). Input column names are not waved through: a renamed
// input column of the same type may be another column (a key whose meaning changed restores
// silently, with wrong results).
func namesOnly(c FieldChange) string {
	switch {
	case aggCallName.MatchString(c.Path):
		return "an aggregate call's output name changed (names do not reach state)"
	case intervalBound.MatchString(c.Path):
		// The buffered rows and their cleanup timers have the same layout under any bounds;
		// Flink 2.3.0 restored a 1.20 interval join with a wider bound and joined the rows it
		// held (testdata/upgrades/types/v120-interval-join-bound-changed). Rows the old bounds
		// already cleaned up stay gone.
		return "the interval join's time bounds changed (its buffered rows keep their layout; rows the old bounds already dropped are not joined)"
	case c.Kind == "output-type":
		x, ok1 := parseRowType(unquoteJSON(c.Old))
		y, ok2 := parseRowType(unquoteJSON(c.New))
		if !ok1 || !ok2 || len(x) != len(y) {
			return ""
		}
		for i := range x {
			if x[i].Type != y[i].Type {
				return ""
			}
		}
		return "only output column names changed (names do not reach state)"
	}
	return ""
}

// unquoteJSON returns the string a JSON string literal holds, or s itself.
func unquoteJSON(s string) string {
	var v string
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v
	}
	return s
}

package migrate

import (
	"fmt"
	"strings"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/uid"
)

// Selector names an operator: "uid:NAME" (the id Flink derives from the UID) or "hash:HEX" (the
// 32-hex-digit operator id, for operators whose UID was never set).
type Selector struct {
	UID string // set for uid:NAME
	ID  metadata.OperatorID
}

// ParseSelector parses uid:NAME or hash:HEX.
func ParseSelector(s string) (Selector, error) {
	kind, val, ok := strings.Cut(s, ":")
	switch {
	case ok && kind == "uid" && val != "":
		return Selector{UID: val, ID: uid.OperatorID(val)}, nil
	case ok && kind == "hash":
		id, err := metadata.ParseOperatorID(strings.ToLower(val))
		if err != nil {
			return Selector{}, fmt.Errorf("operator %q: %w", s, err)
		}
		return Selector{ID: id}, nil
	}
	return Selector{}, fmt.Errorf("operator %q: want uid:NAME or hash:HEX%s", s, selectorHint(s))
}

// selectorHint suggests the selector a user who wrote a bare UID or operator id meant.
func selectorHint(s string) string {
	if s == "" || strings.Contains(s, ":") {
		return ""
	}
	if _, err := metadata.ParseOperatorID(strings.ToLower(s)); err == nil {
		return fmt.Sprintf(" (hash:%s for the operator with that id, uid:%s for one with that UID)", s, s)
	}
	return fmt.Sprintf(" (uid:%s for the operator with that UID)", s)
}

func (s Selector) String() string {
	if s.UID != "" {
		return "uid:" + s.UID
	}
	return "hash:" + s.ID.String()
}

// Label names an operator of a savepoint for messages: uid:NAME, or hash:HEX without a UID.
func Label(op *metadata.OperatorState) string {
	if op.UID != "" {
		return "uid:" + op.UID
	}
	return "hash:" + op.ID.String()
}

// find returns the operator the selector names, or an error listing what the savepoint has.
func (s Selector) find(m *metadata.Metadata) (*metadata.OperatorState, error) {
	var have []string
	for _, op := range m.Operators {
		if op.ID == s.ID {
			return op, nil
		}
		have = append(have, Label(op))
	}
	return nil, fmt.Errorf("operator %s is not in the savepoint (it has %s)", s, strings.Join(have, ", "))
}

package keyed

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// DeclaredState is one state of a header built from a declaration (savepoint create --spec).
// Kind is value, list, map, reducing, aggregating or timer. Value is the value type (a list's
// element, a map's value; nil for a timer), UserKey a map's key type, Namespace the namespace
// type (VoidNamespace unless the state lives in windows).
type DeclaredState struct {
	Name      string
	Kind      string
	Namespace *serializer.Snapshot
	Value     *serializer.Snapshot
	UserKey   *serializer.Snapshot
	TTL       bool
}

// DeclareHeader builds the header a Flink 2.x heap backend writes into a canonical savepoint for
// these states, in this order (Flink writes its key/value states in registration order, then its
// timer queues), as ReadHeader would return it: the bytes are written, then read back.
//
//	KEY_VALUE state:   options {KEYED_STATE_TYPE: VALUE|LIST|MAP|REDUCING|AGGREGATING},
//	                   serializers VALUE_SERIALIZER (List<e>, Map<k, v>, or the value; TTL values
//	                   wrapped element- or value-wise), then NAMESPACE_SERIALIZER
//	PRIORITY_QUEUE:    no options, VALUE_SERIALIZER = TimerSerializer(key, namespace)
func DeclareHeader(key *serializer.Snapshot, states []DeclaredState) (*Header, error) {
	var buf bytes.Buffer
	w := javaio.NewWriter(&buf)
	w.I32(ProxyVersion)
	w.Bool(false)
	if err := serializer.WriteTop(w, key); err != nil {
		return nil, fmt.Errorf("key type: %w", err)
	}
	if len(states) > maxStates {
		return nil, fmt.Errorf("%d states, at most %d", len(states), maxStates)
	}
	w.I16(int16(len(states)))
	seen := map[string]bool{}
	for _, st := range states {
		if st.Name == "" || seen[st.Name] {
			return nil, fmt.Errorf("state %q: every state needs a name of its own", st.Name)
		}
		seen[st.Name] = true
		ns := st.Namespace
		if ns == nil {
			ns, _ = serializer.Declare("VoidNamespace")
		}
		w.UTF(st.Name)
		var serializers []NamedSnapshot
		if st.Kind == "timer" {
			if st.TTL || st.Value != nil || st.UserKey != nil {
				return nil, fmt.Errorf("state %q: a timer queue has no value, user key or TTL", st.Name)
			}
			w.I32(int32(PriorityQueue))
			w.I32(0)
			serializers = []NamedSnapshot{{SerValue, serializer.DeclareTimer(key, ns)}}
		} else {
			if st.Value == nil {
				return nil, fmt.Errorf("state %q: no value type", st.Name)
			}
			if (st.UserKey != nil) != (st.Kind == "map") {
				return nil, fmt.Errorf("state %q: a user key type is given for a map state, and only for one", st.Name)
			}
			v := st.Value
			if st.TTL {
				v = serializer.DeclareTTL(v)
			}
			switch st.Kind {
			case "value", "reducing", "aggregating":
			case "list":
				v = serializer.DeclareList(v)
			case "map":
				v = serializer.DeclareMap(st.UserKey, v)
			default:
				return nil, fmt.Errorf("state %q: kind %q, want value, list, map, reducing, aggregating or timer", st.Name, st.Kind)
			}
			w.I32(int32(KeyValue))
			w.I32(1)
			w.UTF(OptKeyedStateType)
			w.UTF(strings.ToUpper(st.Kind))
			serializers = []NamedSnapshot{{SerValue, v}, {SerNamespace, ns}}
		}
		w.I32(int32(len(serializers)))
		for _, s := range serializers {
			w.UTF(s.Key)
			if err := serializer.WriteTop(w, s.Snapshot); err != nil {
				return nil, fmt.Errorf("state %q %s: %w", st.Name, s.Key, err)
			}
		}
	}
	if err := w.Err(); err != nil {
		return nil, err
	}
	return ReadHeader(bytes.NewReader(buf.Bytes()), "declared keyed header")
}

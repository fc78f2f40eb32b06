package sourcestate

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// OffsetChange is one requested change of Kafka source positions.
type OffsetChange struct {
	Kind      ChangeKind
	Topic     string
	Partition int32 // -1: every partition of Topic
	Offset    int64 // KindSet: an offset >= 0 or OffsetEarliest, OffsetLatest, OffsetCommitted
	Delta     int64 // KindShift
	NewTopic  string
	// Origin, when set, names what made the change (a --to-timestamp lookup), for messages.
	Origin string
}

// ChangeKind says what an OffsetChange does.
type ChangeKind int

const (
	KindSet    ChangeKind = iota // start the partition(s) at Offset
	KindShift                    // move the starting offset by Delta
	KindRename                   // the topic is now called NewTopic (offsets carried over)
	KindDrop                     // forget the topic: its splits and the enumerator's record of it
)

func (c OffsetChange) String() string {
	if c.Origin != "" {
		o := c
		o.Origin = ""
		return o.String() + " (" + c.Origin + ")"
	}
	tp := c.Topic
	if c.Partition >= 0 {
		tp += ":" + strconv.Itoa(int(c.Partition))
	}
	switch c.Kind {
	case KindSet:
		return "set " + tp + "=" + StartingText(c.Offset)
	case KindShift:
		return fmt.Sprintf("shift %s=%+d", tp, c.Delta)
	case KindRename:
		return "rename-topic " + c.Topic + "=" + c.NewTopic
	}
	return "drop-topic " + c.Topic
}

// ParseOffsetChange reads the command-line forms: "set TOPIC:PARTITION=OFFSET",
// "set TOPIC=earliest|latest|committed|OFFSET", "shift TOPIC[:PARTITION]=+N|-N",
// "rename-topic OLD=NEW", "drop-topic TOPIC" (kind is the flag name without dashes).
func ParseOffsetChange(kind, arg string) (OffsetChange, error) {
	c := OffsetChange{Partition: -1}
	bad := func(format string, a ...any) (OffsetChange, error) {
		return OffsetChange{}, fmt.Errorf("--%s %q: "+format, append([]any{kind, arg}, a...)...)
	}
	if kind == "drop-topic" {
		if arg == "" || strings.ContainsAny(arg, "=:") {
			return bad("want a topic name")
		}
		c.Kind, c.Topic = KindDrop, arg
		return c, nil
	}
	lhs, rhs, ok := strings.Cut(arg, "=")
	if !ok || lhs == "" || rhs == "" {
		return bad("want NAME=VALUE")
	}
	if kind == "rename-topic" {
		if strings.Contains(lhs, ":") || strings.Contains(rhs, ":") || lhs == rhs {
			return bad("want OLD=NEW, two different topic names")
		}
		c.Kind, c.Topic, c.NewTopic = KindRename, lhs, rhs
		return c, nil
	}
	c.Topic = lhs
	if i := strings.LastIndexByte(lhs, ':'); i >= 0 {
		p, err := strconv.ParseInt(lhs[i+1:], 10, 32)
		if err != nil || p < 0 || i == 0 {
			return bad("want TOPIC:PARTITION with a partition number >= 0")
		}
		c.Topic, c.Partition = lhs[:i], int32(p)
	}
	switch kind {
	case "set":
		c.Kind = KindSet
		switch rhs {
		case "earliest":
			c.Offset = OffsetEarliest
		case "latest":
			c.Offset = OffsetLatest
		case "committed":
			c.Offset = OffsetCommitted
		default:
			o, err := strconv.ParseInt(rhs, 10, 64)
			if err != nil || o < 0 {
				return bad("want an offset >= 0, earliest, latest or committed")
			}
			c.Offset = o
		}
	case "shift":
		if rhs[0] != '+' && rhs[0] != '-' {
			return bad("want +N or -N")
		}
		d, err := strconv.ParseInt(rhs, 10, 64)
		if err != nil || d == 0 {
			return bad("want +N or -N with N > 0")
		}
		c.Kind, c.Delta = KindShift, d
	default:
		return bad("unknown change (want set, shift, rename-topic or drop-topic)")
	}
	return c, nil
}

// ReaderSplit is a Kafka split with the reader subtask that holds it.
type ReaderSplit struct {
	Subtask int32
	Split   KafkaSplit
}

// ApplyKafka applies changes to the readers' splits and the enumerator state together, so that
// they stay consistent. A change naming a topic or partition the state does not hold, two
// changes for one partition, an offset change of a partition that starts at a marker (shift
// only), or a shift below 0 is an error and nothing is changed. enum may be nil.
func ApplyKafka(splits []ReaderSplit, enum *KafkaEnumState, changes []OffsetChange) ([]ReaderSplit, *KafkaEnumState, error) {
	held := map[string]map[int32]bool{}
	hold := func(s KafkaSplit) {
		if held[s.Topic] == nil {
			held[s.Topic] = map[int32]bool{}
		}
		held[s.Topic][s.Partition] = true
	}
	for _, s := range splits {
		hold(s.Split)
	}
	if enum != nil {
		for _, p := range enum.Partitions {
			hold(p.Split)
		}
	}
	// which change touches each partition (a rename or drop touches all of its topic)
	touched := map[string]string{}
	for _, c := range changes {
		parts, ok := held[c.Topic]
		if !ok {
			return nil, nil, fmt.Errorf("%s: the savepoint holds no topic %q (it holds %s)", c, c.Topic, describeHeld(held))
		}
		if c.Partition >= 0 && !parts[c.Partition] {
			return nil, nil, fmt.Errorf("%s: the savepoint holds no partition %d of %q (it holds %s)", c, c.Partition, c.Topic, describeHeld(held))
		}
		if c.Kind == KindRename {
			if _, clash := held[c.NewTopic]; clash {
				return nil, nil, fmt.Errorf("%s: the savepoint already holds topic %q", c, c.NewTopic)
			}
		}
		for p := range parts {
			if c.Partition >= 0 && p != c.Partition || c.Kind == KindRename {
				continue // a rename combines with an offset change (both name the old topic)
			}
			id := c.Topic + "-" + strconv.Itoa(int(p))
			if prev, dup := touched[id]; dup {
				return nil, nil, fmt.Errorf("%s and %s both change partition %s: give one change per partition", prev, c, id)
			}
			touched[id] = c.String()
		}
	}
	apply := func(s KafkaSplit, where string) (KafkaSplit, bool, error) {
		topic := s.Topic // changes name the topic as the savepoint holds it
		for _, c := range changes {
			if topic != c.Topic || c.Partition >= 0 && s.Partition != c.Partition {
				continue
			}
			switch c.Kind {
			case KindDrop:
				return s, false, nil
			case KindRename:
				s.Topic = c.NewTopic
			case KindSet:
				s.StartingOffset = c.Offset
			case KindShift:
				if s.StartingOffset < 0 {
					if where == "enumerator" {
						continue // the enumerator keeps the marker it discovered the partition with
					}
					return s, false, fmt.Errorf("%s: %s starts at %s, not at an offset that can be shifted", c, s.ID(), StartingText(s.StartingOffset))
				}
				if c.Delta < 0 && s.StartingOffset+c.Delta < 0 || c.Delta > 0 && s.StartingOffset > math.MaxInt64-c.Delta {
					return s, false, fmt.Errorf("%s: %s would start at %d+(%d), outside 0..%d", c, s.ID(), s.StartingOffset, c.Delta, int64(math.MaxInt64))
				}
				s.StartingOffset += c.Delta
			}
		}
		return s, true, nil
	}
	var out []ReaderSplit
	for _, s := range splits {
		n, keep, err := apply(s.Split, "reader")
		if err != nil {
			return nil, nil, err
		}
		if keep {
			out = append(out, ReaderSplit{s.Subtask, n})
		}
	}
	var ne *KafkaEnumState
	if enum != nil {
		cp := *enum
		cp.Partitions = nil
		for _, p := range enum.Partitions {
			// (versions 1 and 2 record no offsets: Encode writes only topic and partition)
			n, keep, err := apply(p.Split, "enumerator")
			if err != nil {
				return nil, nil, err
			}
			if keep {
				p.Split = n
				cp.Partitions = append(cp.Partitions, p)
			}
		}
		ne = &cp
	}
	return out, ne, nil
}

func describeHeld(held map[string]map[int32]bool) string {
	var topics []string
	for t, ps := range held {
		var ids []int
		for p := range ps {
			ids = append(ids, int(p))
		}
		sort.Ints(ids)
		var s []string
		for _, p := range ids {
			s = append(s, strconv.Itoa(p))
		}
		topics = append(topics, fmt.Sprintf("%s (partitions %s)", t, strings.Join(s, ",")))
	}
	sort.Strings(topics)
	return strings.Join(topics, ", ")
}

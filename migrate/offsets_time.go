package migrate

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/statecraft/statecraft/kafkaclient"
	"github.com/statecraft/statecraft/statecore/sourcestate"
)

// TimeLookup moves every partition of a KafkaSource (but those of dropped topics) to the first
// offset at or after a point in time, asked of a real Kafka cluster at the time of the
// migration, as Flink's OffsetsInitializer.timestamp would. A renamed topic is asked under its
// new name. A partition that another change also names is an error (one change per partition).
type TimeLookup struct {
	Millis int64
	Kafka  *kafkaclient.Config
}

// NewTimeLookup reads the --to-timestamp, --bootstrap-servers and --kafka-config values (a
// properties file in Kafka's client format for TLS and SASL). Connection settings without a
// timestamp are an error: they would not take effect.
func NewTimeLookup(ts, bootstrap, configFile string) (*TimeLookup, error) {
	if ts == "" {
		if bootstrap != "" || configFile != "" {
			return nil, fmt.Errorf("bootstrap-servers and kafka-config are used only with to-timestamp")
		}
		return nil, nil
	}
	ms, err := kafkaclient.ParseTimestamp(ts)
	if err != nil {
		return nil, fmt.Errorf("to-timestamp: %w", err)
	}
	props := map[string]string{}
	name := "(no kafka-config)"
	if configFile != "" {
		f, err := os.Open(configFile)
		if err != nil {
			return nil, fmt.Errorf("kafka-config: %w", err)
		}
		defer f.Close()
		if props, err = kafkaclient.ReadProperties(f, configFile); err != nil {
			return nil, fmt.Errorf("kafka-config: %w", err)
		}
		name = configFile
	}
	cfg, err := kafkaclient.ParseConfig(props, bootstrap, name)
	if err != nil {
		return nil, fmt.Errorf("to-timestamp: %w", err)
	}
	return &TimeLookup{Millis: ms, Kafka: cfg}, nil
}

func (l *TimeLookup) String() string {
	return fmt.Sprintf("to-timestamp %s via %s", time.UnixMilli(l.Millis).UTC().Format(time.RFC3339Nano), strings.Join(l.Kafka.Bootstrap, ","))
}

// changes asks the cluster and turns its answer into one set change per partition held.
func (l *TimeLookup) changes(held []sourcestate.KafkaSplit, given []sourcestate.OffsetChange) ([]sourcestate.OffsetChange, error) {
	dropped, renamed := map[string]bool{}, map[string]string{}
	for _, c := range given {
		switch c.Kind {
		case sourcestate.KindDrop:
			dropped[c.Topic] = true
		case sourcestate.KindRename:
			renamed[c.Topic] = c.NewTopic
		}
	}
	want := map[string][]int32{} // by the name the cluster knows
	seen := map[string]bool{}
	for _, s := range held {
		if dropped[s.Topic] || seen[s.ID()] {
			continue
		}
		seen[s.ID()] = true
		t := s.Topic
		if nt, ok := renamed[t]; ok {
			t = nt
		}
		want[t] = append(want[t], s.Partition)
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("%s: no partition left to move", l)
	}
	got, err := kafkaclient.OffsetsAfter(context.Background(), l.Kafka, l.Millis, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l, err)
	}
	var out []sourcestate.OffsetChange
	for _, s := range held {
		if dropped[s.Topic] || !seen[s.ID()] {
			continue
		}
		seen[s.ID()] = false
		t := s.Topic
		if nt, ok := renamed[t]; ok {
			t = nt
		}
		out = append(out, sourcestate.OffsetChange{Kind: sourcestate.KindSet, Topic: s.Topic, Partition: s.Partition,
			Offset: got[t][s.Partition], Origin: l.String()})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Topic < out[j].Topic || out[i].Topic == out[j].Topic && out[i].Partition < out[j].Partition
	})
	return out, nil
}

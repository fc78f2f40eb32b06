package kafkaclient

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// OffsetsAfter asks the cluster, for each wanted partition, for the offset of the first record
// whose timestamp is at or after millis (Kafka's ListOffsets by timestamp); a partition with no
// such record gets its end offset, as Flink's OffsetsInitializer.timestamp resolves it. A topic
// or partition the cluster does not have is an error naming it. The whole exchange is bounded
// by ctx and by twice the configured request timeout.
func OffsetsAfter(ctx context.Context, c *Config, millis int64, want map[string][]int32) (map[string]map[int32]int64, error) {
	cl, err := kgo.NewClient(c.opts()...)
	if err != nil {
		return nil, fmt.Errorf("kafka client for %s: %w", strings.Join(c.Bootstrap, ","), err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*c.Timeout)
	defer cancel()
	var topics []string
	for t := range want {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	listed, err := kadm.NewClient(cl).ListOffsetsAfterMilli(ctx, millis, topics...)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		var missing []string
		for t, ps := range listed {
			if p, ok := ps[-1]; ok && errors.Is(p.Err, kerr.UnknownTopicOrPartition) {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			return nil, fmt.Errorf("kafka cluster %s has no topic %s", strings.Join(c.Bootstrap, ","), strings.Join(missing, ", "))
		}
		return nil, fmt.Errorf("listing offsets after %d ms on %s: %w", millis, strings.Join(c.Bootstrap, ","), err)
	}
	out := map[string]map[int32]int64{}
	for _, t := range topics {
		got, ok := listed[t]
		if !ok {
			return nil, fmt.Errorf("kafka cluster %s has no topic %s", strings.Join(c.Bootstrap, ","), t)
		}
		out[t] = map[int32]int64{}
		for _, p := range want[t] {
			o, ok := got[p]
			if !ok {
				return nil, fmt.Errorf("kafka cluster %s has no partition %d of topic %s (it has %s)", strings.Join(c.Bootstrap, ","), p, t, partitionList(got))
			}
			if o.Offset < 0 {
				return nil, fmt.Errorf("kafka cluster %s: no offset for %s-%d after %d ms (broker answered %d)", strings.Join(c.Bootstrap, ","), t, p, millis, o.Offset)
			}
			out[t][p] = o.Offset
		}
	}
	return out, nil
}

func partitionList(ps map[int32]kadm.ListedOffset) string {
	var ids []int
	for p := range ps {
		ids = append(ids, int(p))
	}
	sort.Ints(ids)
	var s []string
	for _, p := range ids {
		s = append(s, strconv.Itoa(p))
	}
	return "partitions " + strings.Join(s, ",")
}

// ParseTimestamp reads a point in time: milliseconds since the epoch (as Kafka record
// timestamps are), or RFC 3339 (2024-05-01T12:00:00Z, fractions allowed).
func ParseTimestamp(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return 0, fmt.Errorf("timestamp %q: want milliseconds >= 0 since the epoch", s)
		}
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: want milliseconds since the epoch or RFC 3339 (2024-05-01T12:00:00Z)", s)
	}
	if t.UnixMilli() < 0 {
		return 0, fmt.Errorf("timestamp %q is before 1970", s)
	}
	return t.UnixMilli(), nil
}

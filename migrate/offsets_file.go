package migrate

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/statecraft/statecraft/statecore/sourcestate"
)

// OffsetsFromFile reads the offsets to set from a file of topic, partition, offset triples (as
// MirrorMaker 2's offset translation is usually exported): a JSON list of objects
//
//	[{"topic": "orders", "partition": 0, "offset": 42}, ...]
//
// or CSV, one "topic,partition,offset" per line, with an optional header line. Each triple is
// one "set TOPIC:PARTITION=OFFSET" change (--from-file and the offsets step's from-file).
func OffsetsFromFile(p string) ([]sourcestate.OffsetChange, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var out []sourcestate.OffsetChange
	add := func(where, topic, part, off string) error {
		ch, err := sourcestate.ParseOffsetChange("set", topic+":"+part+"="+off)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		ch.Origin = p + " " + where
		out = append(out, ch)
		return nil
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		var rows []struct {
			Topic     *string `json:"topic"`
			Partition *int64  `json:"partition"`
			Offset    *int64  `json:"offset"`
		}
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rows); err != nil {
			return nil, fmt.Errorf("JSON: %w", err)
		}
		for i, r := range rows {
			if r.Topic == nil || r.Partition == nil || r.Offset == nil {
				return nil, fmt.Errorf("JSON element %d: want topic, partition and offset", i)
			}
			if err := add(fmt.Sprintf("JSON element %d", i), *r.Topic, strconv.FormatInt(*r.Partition, 10), strconv.FormatInt(*r.Offset, 10)); err != nil {
				return nil, err
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("JSON: an empty list (want at least one {topic, partition, offset})")
		}
		return out, nil
	}
	rd := csv.NewReader(bytes.NewReader(b))
	rd.FieldsPerRecord = 3
	rd.TrimLeadingSpace = true
	recs, err := rd.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("CSV (want topic,partition,offset per line): %w", err)
	}
	for i, r := range recs {
		if i == 0 && strings.EqualFold(r[0], "topic") {
			continue
		}
		if err := add(fmt.Sprintf("CSV line %d", i+1), r[0], r[1], r[2]); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("CSV: no topic,partition,offset line")
	}
	return out, nil
}

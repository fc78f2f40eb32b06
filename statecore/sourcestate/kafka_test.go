package sourcestate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func i32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func i64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func utf(s string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(s))), s...)
}
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// splitBytes is a version-0 split payload built field by field (the layout in doc.go).
func splitBytes(topic string, p int32, start, stop int64) []byte {
	return cat(utf(topic), i32(p), i64(start), i64(stop))
}

func TestKafkaSplitDecode(t *testing.T) {
	good := splitBytes("orders", 2, 4, OffsetNone)
	tests := []struct {
		name    string
		version int32
		in      []byte
		want    KafkaSplit
		err     string
	}{
		{"plain", 0, good, KafkaSplit{"orders", 2, 4, OffsetNone}, ""},
		{"earliest marker", 0, splitBytes("t", 0, OffsetEarliest, 10), KafkaSplit{"t", 0, -2, 10}, ""},
		{"committed marker", 0, splitBytes("t", 0, OffsetCommitted, OffsetCommitted), KafkaSplit{"t", 0, -3, -3}, ""},
		{"unknown version", 1, good, KafkaSplit{}, "KafkaPartitionSplit serializer version 1 is not known"},
		{"truncated", 0, good[:len(good)-3], KafkaSplit{}, "offset 20: stoppingOffset: want 8 bytes, file has 5"},
		{"trailing", 0, append(append([]byte{}, good...), 0), KafkaSplit{}, "offset 28: end of split: 1 bytes after the stopping offset"},
		{"offset below -3", 0, splitBytes("t", 0, -4, OffsetNone), KafkaSplit{}, "startingOffset: want an offset >= 0 or a marker"},
		{"stopping earliest", 0, splitBytes("t", 0, 0, OffsetEarliest), KafkaSplit{}, "stoppingOffset: want an offset >= 0 or a marker"},
		{"negative partition", 0, splitBytes("t", -1, 0, OffsetNone), KafkaSplit{}, "partition: want a partition number >= 0, got -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeKafkaSplit(tc.version, tc.in, "sp/op[0]")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			enc, err := got.Encode()
			if err != nil || !bytes.Equal(enc, tc.in) {
				t.Fatalf("re-encoded %x, %v; want %x", enc, err, tc.in)
			}
		})
	}
	var uv *UnknownVersionError
	if _, err := DecodeKafkaSplit(7, good, "x"); !errors.As(err, &uv) || uv.Version != 7 {
		t.Fatalf("unknown version: %v, want an UnknownVersionError", err)
	}
}

func TestKafkaEnumDecode(t *testing.T) {
	s1 := splitBytes("orders", 0, 5, OffsetNone)
	s2 := splitBytes("pay", 1, OffsetEarliest, OffsetNone)
	v3 := cat(i32(2), i32(0), i32(int32(len(s1))), s1, i32(0), i32(int32(len(s2))), s2, i32(1), []byte{1})
	v2 := cat(i32(2), utf("orders"), i32(0), i32(0), utf("pay"), i32(1), i32(1), []byte{0})
	v1 := cat(i32(1), utf("orders"), i32(0))
	v0 := cat(i32(2), i32(0), i32(0), i32(1), i32(int32(len(s1))), s1, i32(3), i32(1), i32(int32(len(s2))), s2)
	split := func(topic string, p int32, start int64) KafkaSplit { return KafkaSplit{topic, p, start, OffsetNone} }
	tests := []struct {
		name    string
		version int32
		in      []byte
		want    *KafkaEnumState
		err     string
	}{
		{"v3", 3, v3, &KafkaEnumState{Version: 3, InitialDiscoveryFinished: true, Partitions: []KafkaEnumPartition{
			{split("orders", 0, 5), Assigned, -1}, {split("pay", 1, OffsetEarliest), Unassigned, -1}}}, ""},
		{"v2", 2, v2, &KafkaEnumState{Version: 2, Partitions: []KafkaEnumPartition{
			{split("orders", 0, OffsetNone), Assigned, -1}, {split("pay", 1, OffsetNone), Unassigned, -1}}}, ""},
		{"v1", 1, v1, &KafkaEnumState{Version: 1, InitialDiscoveryFinished: true, Partitions: []KafkaEnumPartition{
			{split("orders", 0, OffsetNone), Assigned, -1}}}, ""},
		{"v0", 0, v0, &KafkaEnumState{Version: 0, InitialDiscoveryFinished: true, Partitions: []KafkaEnumPartition{
			{split("orders", 0, 5), Assigned, 0}, {split("pay", 1, OffsetEarliest), Assigned, 3}}}, ""},
		{"unknown version", 4, v3, nil, "KafkaSourceEnumState serializer version 4 is not known"},
		{"longer than its frame", 3, append(append([]byte{}, v3...), 9, 9), nil, "2 bytes after the last field (version 3 allows none)"},
		{"truncated", 3, v3[:len(v3)-1], nil, "initialDiscoveryFinished: want 1 bytes, file has 0"},
		{"split frame lies", 3, cat(i32(1), i32(0), i32(int32(len(s1)+1)), s1, []byte{0, 0, 0, 0, 0}), nil, "frame says 29 bytes, the split has 28"},
		{"unknown split version", 3, cat(i32(1), i32(5), i32(int32(len(s1))), s1, i32(0), []byte{1}), nil, "split serializer version 5 is not known"},
		{"bad status", 2, cat(i32(1), utf("t"), i32(0), i32(7), []byte{1}), nil, "status: want 0 (assigned) or 1 (unassigned), got 7"},
		{"v0 subtask twice", 0, cat(i32(2), i32(0), i32(3), i32(1), i32(int32(len(s1))), s1, i32(3), i32(1), i32(int32(len(s2))), s2), nil, "offset 48: subtask[1].id: subtask 3 appears twice"},
		{"huge count", 1, cat(i32(1<<30), utf("t"), i32(0)), nil, "numPartitions: count 1073741824 out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeKafkaEnum(tc.version, tc.in, "sp/coordinator")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
			enc, err := got.Encode()
			if err != nil || !bytes.Equal(enc, tc.in) {
				t.Fatalf("re-encoded %x, %v\nwant         %x", enc, err, tc.in)
			}
		})
	}
}

func TestCoordinator(t *testing.T) {
	payload := []byte{1, 2, 3}
	v1 := cat(i32(1), i32(3), i32(3), payload)
	tests := []struct {
		name string
		in   []byte
		want *Coordinator
		err  string
	}{
		{"v1", v1, &Coordinator{SerdeVersion: 1, Enum: Versioned{3, payload}}, ""},
		{"v0 keeps the assignments after it", append(cat(i32(0), i32(3), i32(3), payload), 7, 7), &Coordinator{SerdeVersion: 0, Enum: Versioned{3, payload}, Trailing: []byte{7, 7}}, ""},
		{"v1 trailing", append(append([]byte{}, v1...), 0), nil, "offset 15: end of coordinator state: 1 bytes after the enumerator checkpoint"},
		{"overlong frame", cat(i32(1), i32(3), i32(4), payload), nil, "offset 12: enumerator checkpoint: want 4 bytes, file has 3"},
		{"unknown serde", cat(i32(2), i32(3), i32(3), payload), nil, "coordinator serde version: want 0 or 1"},
		{"truncated", v1[:6], nil, "enumerator serializer version: want 4 bytes, file has 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadCoordinator(tc.in, "sp/_metadata coordinator")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			if b := got.Bytes(); !bytes.Equal(b, tc.in) {
				t.Fatalf("re-encoded %x, want %x", b, tc.in)
			}
		})
	}
}

func TestVersionedBytes(t *testing.T) {
	for _, tc := range []struct {
		in  []byte
		err string
	}{
		{[]byte{0, 0}, "offset 0: serializer version: want 4 bytes, file has 2"},
		{cat(i32(3), []byte{0, 0}), "offset 4: payload length: want 4 bytes, file has 2"},
		{cat(i32(3), i32(3), []byte("xy")), "offset 4: payload length: frame says 3 bytes, the element has 2 after the frame"},
		{cat(i32(3), i32(1), []byte("xy")), "frame says 1 bytes, the element has 2"},
	} {
		if _, err := ReadVersionedBytes(tc.in, "el"); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%x: err = %v, want %q", tc.in, err, tc.err)
		}
	}
	in := cat(i32(3), i32(2), []byte("xy"))
	v, err := ReadVersionedBytes(in, "el")
	if err != nil || v.Version != 3 || string(v.Payload) != "xy" || !bytes.Equal(v.Bytes(), in) {
		t.Fatalf("got %+v, %v", v, err)
	}
}

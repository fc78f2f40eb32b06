package uid

import (
	"strings"
	"testing"
)

func TestHash(t *testing.T) {
	cases := []struct{ uid, hash, source string }{
		// From Flink's SavepointMetadataDynamicTableSourceTest (expected rows of savepoint_metadata).
		{"broadcast-source-uid", "3a6f51704798c4f418be51bfb6813b77", "flink test"},
		{"keyed-broadcast-process-uid", "413c1d6f88ee8627fe4b8bc533b4cf1b", "flink test"},
		// Printed by Flink 2.3.0 itself: OperatorIdentifier.forUid(uid).getOperatorId()
		// .toHexString(), run on the oracle's classpath (flink-state-processor-api 2.3.0). The
		// savepoint fixtures have ASCII UIDs only; these cover non-ASCII, surrogate pairs, NUL
		// and long UIDs.
		{"my-uid", "8409efe6adc6d20787611f16017c808f", "flink 2.3.0"},
		{"ü", "f1603d7fb657ce405ef893c440d15fe3", "flink 2.3.0"},
		{"äöü-ß", "b109a4679a5063007e72751617333017", "flink 2.3.0"},
		{"日本語のオペレーター", "8ec5ab4263b51b34d369f3a26ae8c692", "flink 2.3.0"},
		{"emoji-😀-uid", "31280a6270291f5fdd765986d5c300c8", "flink 2.3.0"},
		{strings.Repeat("a", 1000), "018fc53f1639e8989afcadb41c8f065c", "flink 2.3.0"},
		{strings.Repeat("x", 65535/3) + "é", "e6d44afb9fd9491423dd22ef2beead1d", "flink 2.3.0"},
		{"uid with spaces\tand\ttabs", "14a62f1ede59ac98c9e72c5c531e8a5c", "flink 2.3.0"},
		{"\x00nul", "ff6b14d88063986ccbbd5987474c5160", "flink 2.3.0"},
	}
	for _, tc := range cases {
		if got := Hash(tc.uid); got != tc.hash {
			t.Errorf("Hash(%.40q) = %s, want %s (%s)", tc.uid, got, tc.hash, tc.source)
		}
		id := OperatorID(tc.uid)
		if got := Hash(tc.uid); got[:2] != hexByte(id[0]) {
			t.Errorf("OperatorID(%.40q)[0] = %02x, hash starts %s", tc.uid, id[0], got[:2])
		}
	}
}

func hexByte(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}

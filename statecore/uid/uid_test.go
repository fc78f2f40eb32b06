package uid

import "testing"

func TestHash(t *testing.T) {
	cases := []struct{ uid, hash, source string }{
		// From Flink's SavepointMetadataDynamicTableSourceTest (expected rows of savepoint_metadata).
		{"broadcast-source-uid", "3a6f51704798c4f418be51bfb6813b77", "flink test"},
		{"keyed-broadcast-process-uid", "413c1d6f88ee8627fe4b8bc533b4cf1b", "flink test"},
	}
	for _, tc := range cases {
		if got := Hash(tc.uid); got != tc.hash {
			t.Errorf("Hash(%q) = %s, want %s (%s)", tc.uid, got, tc.hash, tc.source)
		}
	}
}

package plan

import (
	"strings"
	"testing"
)

// TestCallAccumulator: each built-in call's accumulator fields over argument types the oracle's
// savepoints do not all hold, as AggFunctionFactory and the functions' accumulator types in
// Flink 2.3.0 give them (the INT, BIGINT, DOUBLE, DECIMAL and VARCHAR rows are also held to
// Flink's snapshots by bridge's TestTypeSavepointsRead), and the calls it refuses to guess.
func TestCallAccumulator(t *testing.T) {
	for _, c := range []struct {
		fn, arg, typ string
		retract      bool
		want, why    string
	}{
		{"$AVG$1", "TINYINT", "TINYINT", false, "BIGINT, BIGINT", ""},
		{"$AVG$1", "FLOAT NOT NULL", "FLOAT", true, "DOUBLE, BIGINT", ""},
		{"$AVG$1", "DECIMAL(10, 4)", "DECIMAL(38, 6)", false, "DECIMAL(38, 4), BIGINT", ""},
		{"$AVG$1", "VARCHAR(3)", "VARCHAR(3)", false, "", "AVG over VARCHAR(3)"},
		{"$SUM$1", "DECIMAL(10, 2)", "DECIMAL(38, 2)", true, "DECIMAL(38, 2), BIGINT", ""},
		{"$SUM0$1", "INT", "INT", true, "INT", ""},
		{"$COUNT$1", "VARCHAR(3)", "BIGINT", true, "BIGINT", ""},
		{"$MIN$1", "CHAR(3)", "CHAR(3)", false, "VARCHAR(2147483647)", ""},
		{"$MAX$1", "TIME(3)", "TIME(3)", false, "TIME(0)", ""},
		{"$MAX$1", "TIMESTAMP(6) NOT NULL", "TIMESTAMP(6)", false, "TIMESTAMP(6)", ""},
		{"$MAX$1", "BIGINT NOT NULL", "BIGINT", true, "STRUCTURED<'" + runtimeAggPkg + "MaxWithRetractAggFunction$MaxWithRetractAccumulator', `max` BIGINT, `mapSize` BIGINT, `map` " + StateBackedView + ">", ""},
		{"$MIN$1", "DECIMAL(10, 2)", "DECIMAL(10, 2)", true, "STRUCTURED<'" + runtimeAggPkg + "MinWithRetractAggFunction$MinWithRetractAccumulator', `min` DECIMAL(10, 2), `mapSize` BIGINT, `map` " + StateBackedView + ">", ""},
		{"$MIN$1", "TIMESTAMP(9) NOT NULL", "TIMESTAMP(9)", true, "STRUCTURED<'" + runtimeAggPkg + "MinWithRetractAggFunction$MinWithRetractAccumulator', `min` TIMESTAMP(9), `mapSize` BIGINT, `map` " + StateBackedView + ">", ""},
		{"$MIN$1", "TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP(3) WITH LOCAL TIME ZONE", true, "", "a data view keyed by a TIMESTAMP(3) WITH LOCAL TIME ZONE column"},
		{"$LAST_VALUE$1", "VARCHAR(5)", "VARCHAR(5)", false, "ROW<`lastValue` VARCHAR(5), `lastOrder` BIGINT>", ""},
		{"$LISTAGG$1", "VARCHAR(5)", "VARCHAR(5)", false, "VARCHAR(2147483647), VARCHAR(2147483647)", ""},
		{"$JSON_ARRAYAGG_ABSENT_ON_NULL$1", "VARCHAR(2147483647)", "VARCHAR(2000)", false, "STRUCTURED<'" + runtimeAggPkg + "JsonArrayAggFunction$Accumulator', `list` " + StateBackedListView + ">", ""},
		{"$JSON_OBJECTAGG_ABSENT_ON_NULL$1", "VARCHAR(2147483647)", "VARCHAR(2000)", true, "STRUCTURED<'" + runtimeAggPkg + "JsonObjectAggFunction$Accumulator', `map` " + StateBackedView + ">", ""},
		{"$ARRAY_AGG$1", "INT", "ARRAY<INT>", false, "", "statecraft derives accumulators only for"},
	} {
		views := map[string]ValueType{}
		got, why := callAccumulator(3, c.fn, []string{c.arg}, c.typ, c.retract, views)
		if c.why != "" {
			if !strings.Contains(why, c.why) {
				t.Errorf("%s(%s): why %q, want it to say %q", c.fn, c.arg, why, c.why)
			}
			continue
		}
		if why != "" || strings.Join(got, ", ") != c.want {
			t.Errorf("%s(%s) retract=%v: %q (%s), want %q", c.fn, c.arg, c.retract, strings.Join(got, ", "), why, c.want)
		}
		if c.fn == "$MAX$1" && c.retract && views["agg3$map"].String() != "Map<External<Long>, External<Long>>" {
			t.Errorf("MAX over retraction's view: %v", views)
		}
		// A TIMESTAMP's view key keeps its precision (Flink refuses another: the catalogue's
		// v23-retract-more-distinct-timestamp-precision).
		if c.arg == "TIMESTAMP(9) NOT NULL" && views["agg3$map"].String() != "Map<External<TimestampData(9)>, External<Long>>" {
			t.Errorf("MIN over retraction's view: %v", views)
		}
	}
}

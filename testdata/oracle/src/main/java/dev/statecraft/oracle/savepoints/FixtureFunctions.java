package dev.statecraft.oracle.savepoints;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.streaming.api.functions.source.legacy.SourceFunction;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;

/**
 * The user functions of the fixture jobs. Every record i (0..n-1) of the one source decides
 * keys and values, so the state of a fixture is the same on every run. Each function bumps
 * {@link #PROCESSED} after it has updated its state: the runner waits for the expected count
 * before it takes the savepoint (the barrier then follows every record).
 */
final class FixtureFunctions {
    private FixtureFunctions() {}

    static final AtomicLong PROCESSED = new AtomicLong();

    /** Far-future timestamps so no timer fires before the savepoint. */
    static final long EVENT_TIMER_BASE = 1_000_000_000_000L;
    static final long PROC_TIMER_BASE = 4_102_444_800_000L; // 2100-01-01T00:00:00Z

    /** Emits 0..n-1 once, then idles until cancelled (no end of input, no final watermark). */
    static final class FixedSource implements SourceFunction<Long> {
        private final long n;
        private volatile boolean running = true;

        FixedSource(long n) {
            this.n = n;
        }

        @Override
        public void run(SourceContext<Long> ctx) throws Exception {
            for (long i = 0; i < n && running; i++) {
                synchronized (ctx.getCheckpointLock()) {
                    ctx.collect(i);
                }
            }
            while (running) Thread.sleep(20);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    /** Sum reducer for ReducingState<Long>. */
    static long sum(long a, long b) {
        return a + b;
    }

    /** (min, max) of the inputs; getResult returns the accumulator so reading it shows what is stored. */
    static final class MinMax implements AggregateFunction<Long, Tuple2<Long, Long>, Tuple2<Long, Long>> {
        @Override
        public Tuple2<Long, Long> createAccumulator() {
            return Tuple2.of(Long.MAX_VALUE, Long.MIN_VALUE);
        }

        @Override
        public Tuple2<Long, Long> add(Long v, Tuple2<Long, Long> acc) {
            return Tuple2.of(Math.min(acc.f0, v), Math.max(acc.f1, v));
        }

        @Override
        public Tuple2<Long, Long> getResult(Tuple2<Long, Long> acc) {
            return acc;
        }

        @Override
        public Tuple2<Long, Long> merge(Tuple2<Long, Long> a, Tuple2<Long, Long> b) {
            return Tuple2.of(Math.min(a.f0, b.f0), Math.max(a.f1, b.f1));
        }
    }

    /** Registers an event timer at the window's last millisecond and fires there (everyElement:
     *  on every element too, without purging). The fixtures' watermark trails by a day, so until
     *  then each window keeps its contents and its timer. */
    static final class WindowEndTrigger<W extends Window> extends Trigger<Object, W> {
        private final boolean everyElement;

        WindowEndTrigger(boolean everyElement) {
            this.everyElement = everyElement;
        }

        @Override
        public TriggerResult onElement(Object element, long timestamp, W w, TriggerContext ctx) {
            ctx.registerEventTimeTimer(w.maxTimestamp());
            return everyElement ? TriggerResult.FIRE : TriggerResult.CONTINUE;
        }

        @Override
        public TriggerResult onEventTime(long time, W w, TriggerContext ctx) {
            return time == w.maxTimestamp() ? TriggerResult.FIRE : TriggerResult.CONTINUE;
        }

        @Override
        public TriggerResult onProcessingTime(long time, W w, TriggerContext ctx) {
            return TriggerResult.CONTINUE;
        }

        @Override
        public void clear(W w, TriggerContext ctx) {
            ctx.deleteEventTimeTimer(w.maxTimestamp());
        }
    }

    /** (sum, count); getResult returns the accumulator. Bumps PROCESSED when used by a window. */
    static final class SumCount<T extends Number> implements AggregateFunction<T, Tuple2<Long, Long>, Tuple2<Long, Long>> {
        private final boolean bump;

        SumCount(boolean bump) {
            this.bump = bump;
        }

        @Override
        public Tuple2<Long, Long> createAccumulator() {
            return Tuple2.of(0L, 0L);
        }

        @Override
        public Tuple2<Long, Long> add(T v, Tuple2<Long, Long> acc) {
            if (bump) PROCESSED.incrementAndGet();
            return Tuple2.of(acc.f0 + v.longValue(), acc.f1 + 1);
        }

        @Override
        public Tuple2<Long, Long> getResult(Tuple2<Long, Long> acc) {
            return acc;
        }

        @Override
        public Tuple2<Long, Long> merge(Tuple2<Long, Long> a, Tuple2<Long, Long> b) {
            return Tuple2.of(a.f0 + b.f0, a.f1 + b.f1);
        }
    }

    static final TypeInformation<Tuple2<Long, Long>> LONG_PAIR = Types.TUPLE(Types.LONG, Types.LONG);

    /** Integer key k = i % 12: all five keyed state kinds plus event and processing timers.
     *  Not final: NativeDeletes' job extends it with deletes over the same states. */
    static class IntKeyed extends KeyedProcessFunction<Integer, Long, Long> {
        transient ValueState<Long> count;
        transient ValueState<Double> ratio;
        transient ListState<String> names;
        transient MapState<String, Integer> seen;
        transient ReducingState<Long> sum;
        transient AggregatingState<Long, Tuple2<Long, Long>> minmax;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
            ratio = getRuntimeContext().getState(new ValueStateDescriptor<>("ratio", Types.DOUBLE));
            names = getRuntimeContext().getListState(new ListStateDescriptor<>("names", Types.STRING));
            seen = getRuntimeContext().getMapState(new MapStateDescriptor<>("seen", Types.STRING, Types.INT));
            sum = getRuntimeContext().getReducingState(new ReducingStateDescriptor<>("sum", FixtureFunctions::sum, Types.LONG));
            minmax = getRuntimeContext().getAggregatingState(new AggregatingStateDescriptor<>("minmax", new MinMax(), LONG_PAIR));
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<Long> out) throws Exception {
            int k = ctx.getCurrentKey();
            update(i, k, true);
            ctx.timerService().registerEventTimeTimer(EVENT_TIMER_BASE + k * 1000L);
            if (k % 2 == 0) ctx.timerService().registerProcessingTimeTimer(PROC_TIMER_BASE + k);
            PROCESSED.incrementAndGet();
        }

        /** Record i's update of key k's states (of "seen" only when withSeen). */
        final void update(Long i, int k, boolean withSeen) throws Exception {
            Long c = count.value();
            count.update(c == null ? 1 : c + 1);
            ratio.update(k / 4.0);
            names.add("n" + i);
            if (withSeen) seen.put("m" + (i % 3), i.intValue());
            sum.add(i);
            minmax.add(i);
        }
    }

    /**
     * Integer key i % 5: TTL on collections. List state "recent" (String) and map state "attrs"
     * (String -> Long) carry a TTL, so every list element and every map value is stored with its
     * own TTL timestamp; value state "plain" (Long) has none, for contrast in the same operator.
     */
    static final class TtlCollections extends KeyedProcessFunction<Integer, Long, Long> {
        private transient ListState<String> recent;
        private transient MapState<String, Long> attrs;
        private transient ValueState<Long> plain;

        @Override
        public void open(OpenContext ctx) {
            StateTtlConfig ttl = StateTtlConfig.newBuilder(java.time.Duration.ofDays(1))
                    .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                    .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                    .build();
            ListStateDescriptor<String> r = new ListStateDescriptor<>("recent", Types.STRING);
            r.enableTimeToLive(ttl);
            recent = getRuntimeContext().getListState(r);
            MapStateDescriptor<String, Long> a = new MapStateDescriptor<>("attrs", Types.STRING, Types.LONG);
            a.enableTimeToLive(ttl);
            attrs = getRuntimeContext().getMapState(a);
            plain = getRuntimeContext().getState(new ValueStateDescriptor<>("plain", Types.LONG));
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<Long> out) throws Exception {
            recent.add("r" + i);
            attrs.put("a" + (i % 3), i * 10);
            plain.update(i);
            PROCESSED.incrementAndGet();
        }
    }

    /**
     * Integer key k = i % 6 (18 records: i = k, k+6, k+12): Row and POJO values for schema
     * evolution (issue #6). "profile" (Row(String, Integer)) holds a null String for key 3 and a
     * null Integer for key 4; "events" (list of Row(Integer, String)) a null String when i % 5 == 0;
     * "scores" (map String -> Row(Long, Double), user keys s0..s2) a null Double for i == 13; "account" (POJO) a null
     * owner for key 5; "ttlProfile" is "profile"'s type with a 1-day TTL (null String for key 2).
     */
    static final class Evolve extends KeyedProcessFunction<Integer, Long, Long> {
        static final TypeInformation<Row> PROFILE = Types.ROW(Types.STRING, Types.INT);
        static final TypeInformation<Row> EVENT = Types.ROW(Types.INT, Types.STRING);
        static final TypeInformation<Row> SCORE = Types.ROW(Types.LONG, Types.DOUBLE);

        private transient ValueState<Row> profile;
        private transient ListState<Row> events;
        private transient MapState<String, Row> scores;
        private transient ValueState<Account> account;
        private transient ValueState<Row> ttlProfile;

        @Override
        public void open(OpenContext ctx) {
            profile = getRuntimeContext().getState(new ValueStateDescriptor<>("profile", PROFILE));
            events = getRuntimeContext().getListState(new ListStateDescriptor<>("events", EVENT));
            scores = getRuntimeContext().getMapState(new MapStateDescriptor<>("scores", Types.STRING, SCORE));
            account = getRuntimeContext().getState(new ValueStateDescriptor<>("account", TypeInformation.of(Account.class)));
            ValueStateDescriptor<Row> t = new ValueStateDescriptor<>("ttlProfile", PROFILE);
            t.enableTimeToLive(StateTtlConfig.newBuilder(java.time.Duration.ofDays(1))
                    .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                    .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                    .build());
            ttlProfile = getRuntimeContext().getState(t);
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<Long> out) throws Exception {
            int k = ctx.getCurrentKey();
            int n = i.intValue();
            profile.update(Row.of(k == 3 ? null : "user-" + k, k == 4 ? null : n));
            events.add(Row.of(n, n % 5 == 0 ? null : "e" + n));
            scores.put("s" + (n / 6), Row.of(n * 100L, n == 13 ? null : n / 4.0));
            Account a = account.value();
            if (a == null) a = new Account(k == 5 ? null : "acct-" + k, 0, 0);
            account.update(new Account(a.owner, a.balance + n, a.version + 1));
            ttlProfile.update(Row.of(k == 2 ? null : "t" + n, n * 2));
            PROCESSED.incrementAndGet();
        }
    }

    /**
     * Integer key k = i % 4 (18 records): Row values of every RowKind, which RowSerializer keeps in
     * the first two bits of its null mask. "last" (Row(String, Long)) is the last record's row, of
     * kind k (key 0 +I, 1 -U, 2 +U, 3 -D), with a null String for i == 9; "changes" (list of
     * Row(Integer, String)) one row per record, of kind (i / 4) % 4, a null String when i % 5 ==
     * 0; "byKind" (map String -> Row(Long)) the record's row under its kind's short string.
     */
    static final class RowKinds extends KeyedProcessFunction<Integer, Long, Long> {
        private transient ValueState<Row> last;
        private transient ListState<Row> changes;
        private transient MapState<String, Row> byKind;

        @Override
        public void open(OpenContext ctx) {
            last = getRuntimeContext().getState(new ValueStateDescriptor<>("last", Types.ROW(Types.STRING, Types.LONG)));
            changes = getRuntimeContext().getListState(new ListStateDescriptor<>("changes", Types.ROW(Types.INT, Types.STRING)));
            byKind = getRuntimeContext().getMapState(new MapStateDescriptor<>("byKind", Types.STRING, Types.ROW(Types.LONG)));
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<Long> out) throws Exception {
            int k = ctx.getCurrentKey();
            int n = i.intValue();
            last.update(Row.ofKind(RowKind.fromByteValue((byte) k), n == 9 ? null : "r" + n, i * 10));
            RowKind c = RowKind.fromByteValue((byte) ((n / 4) % 4));
            changes.add(Row.ofKind(c, n, n % 5 == 0 ? null : "c" + n));
            byKind.put(c.shortString(), Row.ofKind(c, i));
            PROCESSED.incrementAndGet();
        }
    }

    /** Long key (i % 7) * 1000000007: String, list of Long, map Long->String and a POJO value. */
    static final class LongKeyed extends KeyedProcessFunction<Long, Long, Long> {
        private transient ValueState<String> last;
        private transient ListState<Long> history;
        private transient MapState<Long, String> byName;
        private transient ValueState<Account> account;

        @Override
        public void open(OpenContext ctx) {
            last = getRuntimeContext().getState(new ValueStateDescriptor<>("last", Types.STRING));
            history = getRuntimeContext().getListState(new ListStateDescriptor<>("history", Types.LONG));
            byName = getRuntimeContext().getMapState(new MapStateDescriptor<>("byName", Types.LONG, Types.STRING));
            account = getRuntimeContext().getState(new ValueStateDescriptor<>("account", TypeInformation.of(Account.class)));
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<Long> out) throws Exception {
            last.update("v" + i);
            history.add(i * 10);
            byName.put(i % 2, "x" + i);
            Account a = account.value();
            if (a == null) a = new Account("acct-" + ctx.getCurrentKey(), 0, 0);
            account.update(new Account(a.owner, a.balance + i, a.version + 1));
            PROCESSED.incrementAndGet();
        }
    }

    /** String key "user-" + i % 5: Tuple2 value, reducing String, a TTL state and an event timer. */
    static final class StringKeyed extends KeyedProcessFunction<String, Long, Long> {
        private transient ValueState<Tuple2<Integer, String>> pair;
        private transient ReducingState<String> concat;
        private transient ValueState<String> session;

        @Override
        public void open(OpenContext ctx) {
            pair = getRuntimeContext().getState(new ValueStateDescriptor<>("pair", Types.TUPLE(Types.INT, Types.STRING)));
            concat = getRuntimeContext().getReducingState(new ReducingStateDescriptor<>("concat", (a, b) -> a + "," + b, Types.STRING));
            ValueStateDescriptor<String> d = new ValueStateDescriptor<>("session", Types.STRING);
            d.enableTimeToLive(StateTtlConfig.newBuilder(java.time.Duration.ofDays(1))
                    .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                    .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                    .build());
            session = getRuntimeContext().getState(d);
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<Long> out) throws Exception {
            pair.update(Tuple2.of(i.intValue(), "p" + i));
            concat.add("c" + i);
            session.update("s" + i);
            ctx.timerService().registerEventTimeTimer(EVENT_TIMER_BASE * 2 + i % 5);
            PROCESSED.incrementAndGet();
        }
    }

    /** Tuple2<Integer,String> key (i % 4, "t" + i % 2): aggregating, Integer value, map String->Double. */
    static final class TupleKeyed extends KeyedProcessFunction<Tuple2<Integer, String>, Long, Long> {
        private transient AggregatingState<Integer, Tuple2<Long, Long>> avg;
        private transient ValueState<Integer> score;
        private transient MapState<String, Double> tags;

        @Override
        public void open(OpenContext ctx) {
            avg = getRuntimeContext().getAggregatingState(new AggregatingStateDescriptor<>("avg", new SumCount<Integer>(false), LONG_PAIR));
            score = getRuntimeContext().getState(new ValueStateDescriptor<>("score", Types.INT));
            tags = getRuntimeContext().getMapState(new MapStateDescriptor<>("tags", Types.STRING, Types.DOUBLE));
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<Long> out) throws Exception {
            avg.add(i.intValue());
            score.update(i.intValue());
            tags.put("g" + (i % 3), i / 2.0);
            PROCESSED.incrementAndGet();
        }
    }

    /** Integer key i % 6, counted in "hits"; runs without a UID, so only its hash names it. */
    static final class NoUidCounter extends KeyedProcessFunction<Integer, Long, Long> {
        private transient ValueState<Integer> hits;

        @Override
        public void open(OpenContext ctx) {
            hits = getRuntimeContext().getState(new ValueStateDescriptor<>("hits", Types.INT));
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<Long> out) throws Exception {
            Integer h = hits.value();
            hits.update(h == null ? 1 : h + 1);
            PROCESSED.incrementAndGet();
        }
    }

    /**
     * Operator list state: "buffer" (split) holds the records this subtask saw, "offsets" (union)
     * holds 100 + subtask index. Which subtask sees which record varies, their union does not.
     */
    static final class BufferMap extends RichMapFunction<Long, Long> implements CheckpointedFunction {
        private final List<String> seen = new ArrayList<>();
        private transient ListState<String> buffer;
        private transient ListState<Long> offsets;

        @Override
        public Long map(Long i) {
            seen.add("r" + i);
            PROCESSED.incrementAndGet();
            return i;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            buffer.update(new ArrayList<>(seen));
            offsets.update(List.of(100L + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask()));
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) throws Exception {
            buffer = ctx.getOperatorStateStore().getListState(new ListStateDescriptor<>("buffer", Types.STRING));
            offsets = ctx.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>("offsets", Types.LONG));
        }
    }

    static final MapStateDescriptor<String, Long> RULES = new MapStateDescriptor<>("rules", Types.STRING, Types.LONG);

    /** Broadcast state "rules" (String -> Long) plus keyed value state "seen" (Integer key i % 4). */
    static final class RuleMatcher extends KeyedBroadcastProcessFunction<Integer, Long, Long, Long> {
        private transient ValueState<Integer> seen;

        @Override
        public void open(OpenContext ctx) {
            seen = getRuntimeContext().getState(new ValueStateDescriptor<>("seen", Types.INT));
        }

        @Override
        public void processElement(Long i, ReadOnlyContext ctx, Collector<Long> out) throws Exception {
            Integer s = seen.value();
            seen.update(s == null ? 1 : s + 1);
            PROCESSED.incrementAndGet();
        }

        @Override
        public void processBroadcastElement(Long r, Context ctx, Collector<Long> out) throws Exception {
            ctx.getBroadcastState(RULES).put("rule-" + r, r * 7);
            PROCESSED.incrementAndGet();
        }
    }
}

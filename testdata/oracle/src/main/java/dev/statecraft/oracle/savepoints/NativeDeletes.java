package dev.statecraft.oracle.savepoints;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.AggregatingState;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingState;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code native-deletes OUTDIR}: a retained incremental RocksDB checkpoint directory whose SST
 * files hold Delete records over Puts of older files, as OUTDIR/native-deletes/ with
 * OUTDIR/native-deletes.expect.json (the State Processor API's reading of the latest checkpoint).
 *
 * <p>The keyed job's states (uid int-keyed) get the 40 records in 3 batches, two completed
 * checkpoints after each, so each batch reaches its own L0 file per column family (3 files stay
 * under RocksDB's L0 compaction trigger of 4, so no compaction folds the deletes away):
 * <ul>
 * <li>batch 1 (records 0..12): the keyed job's updates (puts, list merges, timers);
 * <li>batch 2 (13..25): keys with k % 3 == 0 clear every state and delete both timers
 *     (value/list/reducing/aggregating clear() and map clear() are RocksDB deletes, timer removal a
 *     write-batch delete); keys with k % 3 == 1 remove map key "m1" and clear "ratio"; the others
 *     update as in batch 1;
 * <li>batch 3 (26..39): keys 0 and 6 stay deleted (their records are skipped); keys 3 and 9 are
 *     written again (a Put newer than the Delete); keys with k % 3 == 1 update all but "seen", so
 *     "m1" stays removed while "ratio" is written again.
 * </ul>
 * Flink's RocksDB backend (1.20.0 and 2.3.0) never calls singleDelete (no class of
 * flink-statebackend-rocksdb or -forst references it), so no Flink snapshot holds SingleDelete.
 * TTL cleanup in compaction (FRocksDB's FlinkCompactionFilter) decides kKeep or kRemove, never
 * kPurge, and RocksDB's compaction turns kRemove into a plain Delete (read in the sources, not
 * made into a fixture here: it needs expired entries and a compaction to a non-bottom level).
 */
public final class NativeDeletes {
    private NativeDeletes() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: native-deletes OUTDIR");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        Path tmp = Files.createTempDirectory(out, ".tmp-native-deletes");
        try {
            Configuration conf = new Configuration();
            conf.setString("state.backend.type", "rocksdb");
            conf.setString("execution.checkpointing.incremental", "true");
            conf.setString("execution.checkpointing.num-retained", "1");
            NativeCheckpoints.make(out, tmp, "native-deletes", "rocksdb", true, conf, 1, 3, new Churn());
        } finally {
            SavepointDirs.deleteTree(tmp);
        }
        return 0;
    }

    /** The keyed job's states (names and types of FixtureFunctions.IntKeyed), with deletes. */
    static final class Churn extends KeyedProcessFunction<Integer, Long, Long> {
        static final int BATCH2 = 13, BATCH3 = 26;
        private transient ValueState<Long> count;
        private transient ValueState<Double> ratio;
        private transient ListState<String> names;
        private transient MapState<String, Integer> seen;
        private transient ReducingState<Long> sum;
        private transient AggregatingState<Long, Tuple2<Long, Long>> minmax;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
            ratio = getRuntimeContext().getState(new ValueStateDescriptor<>("ratio", Types.DOUBLE));
            names = getRuntimeContext().getListState(new ListStateDescriptor<>("names", Types.STRING));
            seen = getRuntimeContext().getMapState(new MapStateDescriptor<>("seen", Types.STRING, Types.INT));
            sum = getRuntimeContext().getReducingState(new ReducingStateDescriptor<>("sum", FixtureFunctions::sum, Types.LONG));
            minmax = getRuntimeContext().getAggregatingState(new AggregatingStateDescriptor<>("minmax", new FixtureFunctions.MinMax(), FixtureFunctions.LONG_PAIR));
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<Long> out) throws Exception {
            int k = ctx.getCurrentKey();
            long eventTimer = FixtureFunctions.EVENT_TIMER_BASE + k * 1000L;
            long procTimer = FixtureFunctions.PROC_TIMER_BASE + k;
            boolean batch2 = i >= BATCH2 && i < BATCH3, batch3 = i >= BATCH3;
            if (batch2 && k % 3 == 0) {
                count.clear();
                ratio.clear();
                names.clear();
                seen.clear();
                sum.clear();
                minmax.clear();
                ctx.timerService().deleteEventTimeTimer(eventTimer);
                ctx.timerService().deleteProcessingTimeTimer(procTimer);
            } else if (batch2 && k % 3 == 1) {
                seen.remove("m1");
                ratio.clear();
            } else if (!(batch3 && (k == 0 || k == 6))) {
                Long c = count.value();
                count.update(c == null ? 1 : c + 1);
                ratio.update(k / 4.0);
                names.add("n" + i);
                if (!(batch3 && k % 3 == 1)) seen.put("m" + (i % 3), i.intValue());
                sum.add(i);
                minmax.add(i);
                ctx.timerService().registerEventTimeTimer(eventTimer);
                ctx.timerService().registerProcessingTimeTimer(procTimer);
            }
            FixtureFunctions.PROCESSED.incrementAndGet();
        }
    }
}

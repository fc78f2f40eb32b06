package dev.statecraft.oracle.savepoints;

import org.apache.flink.util.Collector;

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
        return NativeCheckpoints.runIncremental(args, "native-deletes", "native-deletes", 1, 3, new Churn());
    }

    /** The keyed job (FixtureFunctions.IntKeyed's states and updates), with deletes. */
    static final class Churn extends FixtureFunctions.IntKeyed {
        static final int BATCH2 = 13, BATCH3 = 26;

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
                update(i, k, !(batch3 && k % 3 == 1));
                ctx.timerService().registerEventTimeTimer(eventTimer);
                ctx.timerService().registerProcessingTimeTimer(procTimer);
            }
            FixtureFunctions.PROCESSED.incrementAndGet();
        }
    }
}

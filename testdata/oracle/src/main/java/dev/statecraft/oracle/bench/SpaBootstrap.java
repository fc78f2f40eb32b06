package dev.statecraft.oracle.bench;

import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.OperatorTransformation;
import org.apache.flink.state.api.SavepointWriter;
import org.apache.flink.state.api.StateBootstrapTransformation;
import org.apache.flink.state.api.functions.KeyedStateBootstrapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * {@code bench-spa-bootstrap DST KEYS [MAP_ENTRIES_PER_KEY] [BACKEND]}: the peer of {@code
 * statecraft savepoint create} in the benchmarks. One State Processor API job bootstraps the
 * {@code bench-savepoint} operator's state (uid, types, max parallelism 128, parallelism 2) into
 * a new savepoint at DST: per key k of 0..KEYS-1 the ValueState 3k and the MapState entries
 * j -> k+j, the state bench-savepoint's job holds. The keys are generated inside the job (no input
 * file is parsed), which can only make the peer faster than a real bootstrap from an export.
 */
public final class SpaBootstrap {
    private SpaBootstrap() {}

    public static int run(String[] args) throws Exception {
        if (args.length < 2 || args.length > 4) {
            System.err.println("usage: bench-spa-bootstrap DST KEYS [MAP_ENTRIES_PER_KEY=9] [BACKEND=hashmap]");
            return 2;
        }
        String dst = args[0];
        long keys = Long.parseLong(args[1]);
        int perKey = args.length > 2 ? Integer.parseInt(args[2]) : 9;
        String backend = args.length > 3 ? args[3] : "hashmap";
        if (Files.exists(Paths.get(dst))) {
            System.err.println("bench-spa-bootstrap: " + dst + " exists; refusing to overwrite");
            return 2;
        }
        StreamExecutionEnvironment env = SpaDump.env();
        DataStream<Integer> ks = env.fromSequence(0, keys - 1).map(Long::intValue).returns(Types.INT);
        StateBootstrapTransformation<Integer> t = OperatorTransformation.bootstrapWith(ks)
                .setMaxParallelism(BenchSavepoint.MAX_PARALLELISM)
                .keyBy(k -> k, Types.INT)
                .transform(new Fill(perKey));
        SavepointWriter.newSavepoint(env, SpaDump.backend(backend), BenchSavepoint.MAX_PARALLELISM)
                .withOperator(OperatorIdentifier.forUid(BenchSavepoint.UID), t)
                .write(dst);
        env.execute("statecraft-bench-spa-bootstrap");
        return 0;
    }

    static final class Fill extends KeyedStateBootstrapFunction<Integer, Integer> {
        private final int perKey;
        private transient ValueState<Long> value;
        private transient MapState<Integer, Long> map;

        Fill(int perKey) {
            this.perKey = perKey;
        }

        @Override
        public void open(OpenContext ctx) {
            value = getRuntimeContext().getState(BenchSavepoint.valueDescriptor());
            map = getRuntimeContext().getMapState(BenchSavepoint.mapDescriptor());
        }

        @Override
        public void processElement(Integer k, Context ctx) throws Exception {
            value.update(3L * k);
            for (int j = 0; j < perKey; j++) map.put(j, (long) k + j);
        }
    }
}

package dev.statecraft.oracle.bench;

import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.contrib.streaming.state.EmbeddedRocksDBStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

/**
 * {@code bench-spa-dump SAVEPOINT UID STATE [BACKEND]}: the peer of {@code statecraft savepoint
 * dump} in the benchmarks. A State Processor API job reads one keyed state of a
 * {@code bench-savepoint} savepoint and prints one line per record to stdout: "key\tvalue" for
 * the ValueState {@value BenchSavepoint#VALUE_STATE}, "key\tuserKey\tvalue" for the MapState
 * {@value BenchSavepoint#MAP_STATE}. Lines are collected to the client and written through one
 * buffered stream (System.out flushes per line). BACKEND (hashmap, the default, or rocksdb) is
 * the backend the reader restores key groups into. Prints the record count to stderr.
 */
public final class SpaDump {
    private SpaDump() {}

    static StateBackend backend(String name) {
        if ("rocksdb".equals(name)) return new EmbeddedRocksDBStateBackend();
        if ("hashmap".equals(name)) return new HashMapStateBackend();
        throw new IllegalArgumentException("unknown backend " + name + " (hashmap or rocksdb)");
    }

    /** A local batch environment with parallelism 2, the machine's core count. */
    static StreamExecutionEnvironment env() {
        Configuration conf = new Configuration();
        conf.setString("taskmanager.numberOfTaskSlots", "4");
        conf.setString("rest.bind-port", "0");
        conf.setString("execution.batch.adaptive.auto-parallelism.enabled", "false");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        return env;
    }

    public static int run(String[] args) throws Exception {
        if (args.length < 3 || args.length > 4) {
            System.err.println("usage: bench-spa-dump SAVEPOINT UID STATE [BACKEND=hashmap]");
            return 2;
        }
        String state = args[2];
        if (!state.equals(BenchSavepoint.VALUE_STATE) && !state.equals(BenchSavepoint.MAP_STATE)) {
            System.err.println("bench-spa-dump: STATE must be " + BenchSavepoint.VALUE_STATE + " or " + BenchSavepoint.MAP_STATE);
            return 2;
        }
        StreamExecutionEnvironment env = env();
        SavepointReader reader = SavepointReader.read(env, args[0], backend(args.length > 3 ? args[3] : "hashmap"));
        long n = 0;
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8), 1 << 16);
        try (CloseableIterator<String> it = reader.readKeyedState(OperatorIdentifier.forUid(args[1]), new Lines(state), Types.INT, Types.STRING)
                .executeAndCollect("statecraft-bench-spa-dump")) {
            while (it.hasNext()) {
                out.write(it.next());
                out.write('\n');
                n++;
            }
        }
        out.flush();
        System.err.println("bench-spa-dump: " + n + " records");
        return 0;
    }

    /** One line per key (value state) or per (key, user key) (map state). */
    static final class Lines extends KeyedStateReaderFunction<Integer, String> {
        private final String state;
        private transient ValueState<Long> value;
        private transient MapState<Integer, Long> map;

        Lines(String state) {
            this.state = state;
        }

        @Override
        public void open(OpenContext ctx) {
            if (state.equals(BenchSavepoint.VALUE_STATE)) value = getRuntimeContext().getState(BenchSavepoint.valueDescriptor());
            else map = getRuntimeContext().getMapState(BenchSavepoint.mapDescriptor());
        }

        @Override
        public void readKey(Integer key, Context ctx, Collector<String> out) throws Exception {
            if (value != null) {
                Long v = value.value();
                if (v != null) out.collect(key + "\t" + v);
                return;
            }
            for (Map.Entry<Integer, Long> e : map.entries()) out.collect(key + "\t" + e.getKey() + "\t" + e.getValue());
        }
    }
}

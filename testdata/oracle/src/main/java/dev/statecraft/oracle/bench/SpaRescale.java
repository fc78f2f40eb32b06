package dev.statecraft.oracle.bench;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.OperatorTransformation;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.SavepointWriter;
import org.apache.flink.state.api.StateBootstrapTransformation;
import org.apache.flink.state.api.functions.KeyedStateBootstrapFunction;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;

/**
 * {@code bench-spa-rescale SRC DST NEWMAXPAR [BACKEND] [WRITE_BACKEND]}: the peer of {@code statecraft migrate
 * rescale} in the benchmarks. One State Processor API job reads every key of the
 * {@code bench-savepoint} operator (its ValueState and all MapState entries) and bootstraps them
 * into a copy of SRC in which that operator has max parallelism NEWMAXPAR (other operators are
 * kept as they are), written to DST. This is the way Flink itself offers to change a max
 * parallelism. BACKEND (hashmap, the default, or rocksdb) is used for reading, and for writing
 * unless WRITE_BACKEND names another. With NEWMAXPAR equal to the source's, a native RocksDB SRC
 * (BACKEND rocksdb) and WRITE_BACKEND hashmap, it is the peer of {@code statecraft migrate
 * convert}: Flink's own way to turn a native savepoint into a canonical one (the writer always
 * writes canonical savepoints).
 */
public final class SpaRescale {
    private SpaRescale() {}

    static final TypeInformation<Tuple3<Integer, Long, Map<Integer, Long>>> RECORD =
            Types.TUPLE(Types.INT, Types.LONG, Types.MAP(Types.INT, Types.LONG));

    public static int run(String[] args) throws Exception {
        if (args.length < 3 || args.length > 5) {
            System.err.println("usage: bench-spa-rescale SRC DST NEWMAXPAR [BACKEND=hashmap] [WRITE_BACKEND=BACKEND]");
            return 2;
        }
        String src = args[0];
        String dst = args[1];
        int maxPar = Integer.parseInt(args[2]);
        String backend = args.length > 3 ? args[3] : "hashmap";
        String writeBackend = args.length > 4 ? args[4] : backend;
        if (Files.exists(Paths.get(dst))) {
            System.err.println("bench-spa-rescale: " + dst + " exists; refusing to overwrite");
            return 2;
        }
        OperatorIdentifier id = OperatorIdentifier.forUid(BenchSavepoint.UID);
        StreamExecutionEnvironment env = SpaDump.env();
        DataStream<Tuple3<Integer, Long, Map<Integer, Long>>> all = SavepointReader.read(env, src, SpaDump.backend(backend))
                .readKeyedState(id, new ReadAll(), Types.INT, RECORD);
        StateBootstrapTransformation<Tuple3<Integer, Long, Map<Integer, Long>>> t = OperatorTransformation.bootstrapWith(all)
                .setMaxParallelism(maxPar)
                .keyBy(r -> r.f0, Types.INT)
                .transform(new WriteAll());
        SavepointWriter.fromExistingSavepoint(env, src, SpaDump.backend(writeBackend))
                .removeOperator(id)
                .withOperator(id, t)
                .write(dst);
        env.execute("statecraft-bench-spa-rescale");
        return 0;
    }

    /** (key, value, map entries) per key. */
    static final class ReadAll extends KeyedStateReaderFunction<Integer, Tuple3<Integer, Long, Map<Integer, Long>>> {
        private transient ValueState<Long> value;
        private transient MapState<Integer, Long> map;

        @Override
        public void open(OpenContext ctx) {
            value = getRuntimeContext().getState(BenchSavepoint.valueDescriptor());
            map = getRuntimeContext().getMapState(BenchSavepoint.mapDescriptor());
        }

        @Override
        public void readKey(Integer key, Context ctx, Collector<Tuple3<Integer, Long, Map<Integer, Long>>> out) throws Exception {
            Map<Integer, Long> m = new HashMap<>();
            for (Map.Entry<Integer, Long> e : map.entries()) m.put(e.getKey(), e.getValue());
            out.collect(Tuple3.of(key, value.value(), m));
        }
    }

    static final class WriteAll extends KeyedStateBootstrapFunction<Integer, Tuple3<Integer, Long, Map<Integer, Long>>> {
        private transient ValueState<Long> value;
        private transient MapState<Integer, Long> map;

        @Override
        public void open(OpenContext ctx) {
            value = getRuntimeContext().getState(BenchSavepoint.valueDescriptor());
            map = getRuntimeContext().getMapState(BenchSavepoint.mapDescriptor());
        }

        @Override
        public void processElement(Tuple3<Integer, Long, Map<Integer, Long>> r, Context ctx) throws Exception {
            if (r.f1 != null) value.update(r.f1);
            map.putAll(r.f2);
        }
    }
}

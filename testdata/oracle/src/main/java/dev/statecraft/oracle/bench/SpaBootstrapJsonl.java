package dev.statecraft.oracle.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.Iterator;
import java.util.stream.Stream;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.reader.TextLineInputFormat;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.JsonProcessingException;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.DeserializationFeature;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.OperatorTransformation;
import org.apache.flink.state.api.SavepointWriter;
import org.apache.flink.state.api.StateBootstrapTransformation;
import org.apache.flink.state.api.functions.KeyedStateBootstrapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;

/**
 * {@code bench-spa-bootstrap-jsonl DST DUMP.jsonl [BACKEND]}: the like-for-like peer of {@code
 * statecraft savepoint create DST --like SP --data DUMP.jsonl} in the benchmarks. Where {@code
 * bench-spa-bootstrap} generates its keys inside the job (a lower bound for a bootstrap's time),
 * this State Processor API job reads the same JSONL export statecraft reads, the output of {@code
 * statecraft savepoint dump} of a {@code bench-savepoint} savepoint, and bootstraps the same
 * operator state (uid, types, max parallelism 128, parallelism 2) into a new savepoint at DST.
 *
 * <p>The file is read with a FileSource of TextLineInputFormat. A text file is one split (the
 * format is not splittable), so one reader reads it, and the parser is chained to it at
 * parallelism 1: that keeps the line numbers its errors name exact, and is how a default job
 * reading one file runs anyway. Each line is parsed as JSON with Flink's shaded Jackson, as a
 * user's bootstrap job would: an object {"operator":"uid:bench-keyed", "state":"count" or
 * "attrs", "key":INT, "namespace":null, "userKey":null or INT, "value":LONG} (keyGroup, which
 * Flink computes itself, is ignored); any other line fails the job, and the command prints
 * FILE:LINE: what was expected and exits 1, removing the partial DST. Blank lines are skipped,
 * as statecraft skips them. The entries are keyed by the Integer key into a
 * KeyedStateBootstrapFunction that sets the ValueState {@value BenchSavepoint#VALUE_STATE} or puts
 * into the MapState {@value BenchSavepoint#MAP_STATE}. Prints the line count to stderr.
 */
public final class SpaBootstrapJsonl {
    private SpaBootstrapJsonl() {}

    private static final String NAME = "bench-spa-bootstrap-jsonl";
    private static final String OPERATOR = "uid:" + BenchSavepoint.UID;
    private static final String LINES = "lines";

    /** key, is a MapState entry, user key (0 for the ValueState), value. */
    private static final TypeInformation<Tuple4<Integer, Boolean, Integer, Long>> ENTRY =
            Types.TUPLE(Types.INT, Types.BOOLEAN, Types.INT, Types.LONG);

    public static int run(String[] args) throws Exception {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: " + NAME + " DST DUMP.jsonl [BACKEND=hashmap]");
            return 2;
        }
        Path dst = Paths.get(args[0]).toAbsolutePath();
        Path dump = Paths.get(args[1]).toAbsolutePath();
        String backend = args.length > 2 ? args[2] : "hashmap";
        if (Files.exists(dst)) {
            System.err.println(NAME + ": " + dst + " exists; refusing to overwrite");
            return 2;
        }
        if (!Files.isRegularFile(dump)) {
            System.err.println(NAME + ": " + args[1] + " is not a file");
            return 2;
        }
        StreamExecutionEnvironment env = SpaDump.env();
        FileSource<String> source = FileSource.forRecordStreamFormat(new TextLineInputFormat(), new org.apache.flink.core.fs.Path(dump.toUri())).build();
        DataStream<Tuple4<Integer, Boolean, Integer, Long>> entries = env
                .fromSource(source, WatermarkStrategy.noWatermarks(), "jsonl")
                .setParallelism(1)
                .flatMap(new Parse(args[1]))
                .returns(ENTRY)
                .setParallelism(1);
        StateBootstrapTransformation<Tuple4<Integer, Boolean, Integer, Long>> t = OperatorTransformation.bootstrapWith(entries)
                .setMaxParallelism(BenchSavepoint.MAX_PARALLELISM)
                .keyBy(e -> e.f0, Types.INT)
                .transform(new Fill());
        SavepointWriter.newSavepoint(env, SpaDump.backend(backend), BenchSavepoint.MAX_PARALLELISM)
                .withOperator(OperatorIdentifier.forUid(BenchSavepoint.UID), t)
                .write(dst.toString());
        JobExecutionResult result;
        try {
            result = env.execute("statecraft-" + NAME);
        } catch (Exception e) {
            for (Throwable c = e; c != null; c = c.getCause()) {
                if (c instanceof BadLine) {
                    System.err.println(NAME + ": " + c.getMessage());
                    removeTree(dst);
                    return 1;
                }
            }
            removeTree(dst);
            throw e;
        }
        Long lines = result.getAccumulatorResult(LINES);
        System.err.println(NAME + ": " + lines + " lines of " + args[1] + " written to " + dst);
        return 0;
    }

    private static void removeTree(Path p) throws IOException {
        if (!Files.exists(p)) return;
        try (Stream<Path> s = Files.walk(p)) {
            for (Iterator<Path> it = s.sorted(Comparator.reverseOrder()).iterator(); it.hasNext(); ) Files.delete(it.next());
        }
    }

    /** A line of the dump that is not a record of the bench operator's state. */
    static final class BadLine extends RuntimeException {
        BadLine(String msg) {
            super(msg);
        }
    }

    /** Parses each line of the dump (in order: parallelism 1, one split) into an entry. */
    static final class Parse extends RichFlatMapFunction<String, Tuple4<Integer, Boolean, Integer, Long>> {
        private final String file;
        private transient ObjectMapper json;
        private transient LongCounter counter;
        private long line;

        Parse(String file) {
            this.file = file;
        }

        @Override
        public void open(OpenContext ctx) {
            json = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
            counter = getRuntimeContext().getLongCounter(LINES);
        }

        /** The node as JSON, or "missing". */
        private static String show(JsonNode n) {
            return n == null ? "missing" : n.toString();
        }

        private BadLine bad(String what) {
            return new BadLine(file + ":" + line + ": " + what);
        }

        @Override
        public void flatMap(String text, Collector<Tuple4<Integer, Boolean, Integer, Long>> out) {
            line++;
            counter.add(1);
            if (text.isBlank()) return;
            JsonNode rec;
            try {
                rec = json.readTree(text);
            } catch (JsonProcessingException e) {
                throw bad("expected a JSON object: " + e.getOriginalMessage());
            }
            if (!rec.isObject()) throw bad("expected a JSON object, got " + rec.getNodeType());
            for (Iterator<String> it = rec.fieldNames(); it.hasNext(); ) {
                String f = it.next();
                switch (f) {
                    case "operator": case "state": case "keyGroup": case "key": case "namespace": case "userKey": case "value":
                        break;
                    default:
                        throw bad("unexpected field \"" + f + "\" (expected operator, state, keyGroup, key, namespace, userKey, value)");
                }
            }
            JsonNode op = rec.get("operator");
            if (op == null || !op.isTextual() || !op.asText().equals(OPERATOR)) {
                throw bad("operator is " + show(op) + ", expected \"" + OPERATOR + "\"");
            }
            JsonNode state = rec.get("state");
            boolean map;
            if (state != null && state.isTextual() && state.asText().equals(BenchSavepoint.VALUE_STATE)) {
                map = false;
            } else if (state != null && state.isTextual() && state.asText().equals(BenchSavepoint.MAP_STATE)) {
                map = true;
            } else {
                throw bad("state is " + show(state) + ", expected \"" + BenchSavepoint.VALUE_STATE + "\" or \"" + BenchSavepoint.MAP_STATE + "\"");
            }
            JsonNode key = rec.get("key");
            if (key == null || !key.isInt()) throw bad("key is " + show(key) + ", expected an int");
            JsonNode ns = rec.get("namespace");
            if (ns == null || !ns.isNull()) throw bad("namespace is " + show(ns) + ", expected null (VoidNamespace)");
            JsonNode uk = rec.get("userKey");
            int userKey = 0;
            if (map) {
                if (uk == null || !uk.isInt()) throw bad("userKey is " + show(uk) + ", expected an int (state " + BenchSavepoint.MAP_STATE + " is a MapState<Integer, Long>)");
                userKey = uk.intValue();
            } else if (uk != null && !uk.isNull()) {
                throw bad("userKey is " + show(uk) + ", expected null (state " + BenchSavepoint.VALUE_STATE + " is a ValueState<Long>)");
            }
            JsonNode v = rec.get("value");
            if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) throw bad("value is " + show(v) + ", expected a long");
            out.collect(Tuple4.of(key.intValue(), map, userKey, v.longValue()));
        }
    }

    static final class Fill extends KeyedStateBootstrapFunction<Integer, Tuple4<Integer, Boolean, Integer, Long>> {
        private transient ValueState<Long> value;
        private transient MapState<Integer, Long> map;

        @Override
        public void open(OpenContext ctx) {
            value = getRuntimeContext().getState(BenchSavepoint.valueDescriptor());
            map = getRuntimeContext().getMapState(BenchSavepoint.mapDescriptor());
        }

        @Override
        public void processElement(Tuple4<Integer, Boolean, Integer, Long> e, Context ctx) throws Exception {
            if (e.f1) map.put(e.f2, e.f3);
            else value.update(e.f3);
        }
    }
}

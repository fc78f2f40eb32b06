package dev.statecraft.oracle.plans;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.state.table.module.StateModule;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.PlanReference;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

/**
 * Oracle command {@code sql-savepoint OUTDIR NAME [PLAN SPEC]} (with PLAN and SPEC: any scripted plan,
 * see {@link PlanSavepoint}). Without: a SQL group aggregate, executed from its
 * compiled plan in a local MiniCluster (parallelism 2, hashmap backend), reads 60 scripted rows
 * over 20 keys; once the sink has seen every key's final count the job is stopped with a savepoint
 * in CANONICAL format. Writes
 *
 * <ul>
 *   <li>{@code OUTDIR/NAME/}: the savepoint directory as Flink wrote it ({@code _metadata}, and
 *       state files if any were larger than the inline threshold);
 *   <li>{@code OUTDIR/NAME.plan.json}: the compiled plan the job ran, and {@code OUTDIR/NAME.sql}
 *       the program it was compiled from;
 *   <li>{@code OUTDIR/NAME.expect.json}: what Flink reads back: the rows of the
 *       {@code savepoint_metadata} function (module {@code state}) and, for the group aggregate
 *       operator, the keyed {@code ValueState<RowData>} named {@code accState} read with the State
 *       Processor API (key {@code ROW<k BIGINT>}, accumulator {@code ROW<BIGINT, BIGINT>} =
 *       COUNT(*), SUM(v)), entries as {@code {"key": [k], "value": [count, sum]}}.
 * </ul>
 */
public final class SqlSavepoint {
    static final int KEYS = 20;
    static final int ROWS = 60;
    static final int PARALLELISM = 2;

    /** The fixture's name (testdata/savepoints/sql-group-aggregate), also savepoints-s3's. */
    public static final String FIXTURE = "sql-group-aggregate";

    static final PlanCatalog.Program PROGRAM = new PlanCatalog.Program(
            FIXTURE,
            "Group aggregate executed from its compiled plan and stopped with a canonical savepoint.",
            List.of(
                    "CREATE TABLE src (\n  k BIGINT,\n  v BIGINT\n) WITH ('connector' = 'statecraft-source',"
                            + " 'after-script' = 'idle')",
                    "CREATE TABLE counts (\n  k BIGINT,\n  c BIGINT,\n  s BIGINT\n)"
                            + " WITH ('connector' = 'statecraft-sink')"),
            "INSERT INTO counts\nSELECT k, COUNT(*) AS c, SUM(v) AS s\nFROM src\nGROUP BY k");

    private SqlSavepoint() {}

    public static int run(String[] args) throws Exception {
        if (args.length == 4) {
            return PlanSavepoint.run(Path.of(args[0]).toAbsolutePath(), args[1],
                    new File(args[2]).getAbsoluteFile(), new File(args[3]).getAbsoluteFile());
        }
        if (args.length != 2) {
            System.err.println("usage: sql-savepoint OUTDIR NAME [PLAN UPGRADE_SPEC]");
            return 2;
        }
        Path outDir = Path.of(args[0]).toAbsolutePath();
        String name = args[1];
        Files.createDirectories(outDir);
        Path planFile = outDir.resolve(name + ".plan.json");
        Path spDir = outDir.resolve(name);

        Files.deleteIfExists(planFile);
        PlanCatalog.compile(PROGRAM).writeToFile(planFile.toFile());
        Files.writeString(outDir.resolve(name + ".sql"), PROGRAM.sqlText(), StandardCharsets.UTF_8);

        Map<Long, long[]> want = installScript();
        Configuration conf = new Configuration();
        conf.setString("state.backend.type", "hashmap");
        JobClient client = runCounted(planFile, conf, want);
        if (client == null) {
            return 1;
        }

        SavepointDirs.stopInto(client, spDir, "sql-savepoint");
        System.err.println("sql-savepoint: savepoint " + spDir);

        ObjectNode expect = Json.obj();
        expect.put("flinkVersion", org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
        expect.put("job", name);
        expect.put("backend", "hashmap");
        expect.put("format", "canonical");
        expect.put("compression", false);
        ArrayNode metadata = metadata(spDir.toString());
        expect.set("metadata", metadata);
        ArrayNode operators = Json.arr();
        for (JsonNode m : metadata) {
            String uid = m.path("operatorUid").asText("");
            if (!uid.endsWith("_group-aggregate")) {
                continue;
            }
            ObjectNode op = Json.obj();
            op.put("uid", uid);
            op.put("uidHash", m.get("operatorUidHash").asText());
            op.put("parallelism", m.get("parallelism").asInt());
            op.put("maxParallelism", m.get("maxParallelism").asInt());
            ObjectNode st = Json.obj();
            st.put("name", "accState");
            st.put("kind", "value");
            st.put("keyType", "RowData<k BIGINT>");
            st.put("valueType", "RowData<count BIGINT, sum BIGINT>");
            st.putNull("userKeyType");
            st.put("ttl", false);
            st.put("rowdata", true);
            ArrayNode entries = accState(spDir.toString(), uid);
            checkAgainstInput(entries, want);
            st.set("entries", entries);
            op.set("keyedStates", Json.arr().add(st));
            op.set("timers", Json.arr());
            op.set("operatorStates", Json.arr());
            operators.add(op);
        }
        if (operators.isEmpty()) {
            System.err.println("sql-savepoint: no *_group-aggregate operator in the savepoint metadata: " + metadata);
            return 1;
        }
        expect.set("operators", operators);
        Json.write(outDir.resolve(name + ".expect.json"), expect);
        System.err.println("sql-savepoint: wrote " + outDir.resolve(name + ".expect.json"));
        return 0;
    }

    /**
     * The group aggregate stopped with a savepoint that Flink writes to target (a URI of any file
     * system Flink has, e.g. s3:// once FileSystem.initialize pointed it at a server), its state in
     * files beside _metadata (inline threshold 0), checkpoint storage under checkpointDir. Same
     * program and rows as the committed fixture, so its expect.json describes the state. Returns
     * the savepoint's location, or null (reason on stderr) when the sink never saw every count.
     */
    public static String toSavepoint(String checkpointDir, String target) throws Exception {
        Path planFile = Files.createTempFile("sql-savepoint", ".plan.json");
        try {
            Files.delete(planFile);
            PlanCatalog.compile(PROGRAM).writeToFile(planFile.toFile());
            Map<Long, long[]> want = installScript();
            Configuration conf = new Configuration();
            conf.setString("state.backend.type", "hashmap");
            conf.setString("execution.checkpointing.storage", "filesystem");
            conf.setString("execution.checkpointing.dir", checkpointDir);
            conf.setString("execution.checkpointing.data-inline-threshold", "0b");
            JobClient client = runCounted(planFile, conf, want);
            if (client == null) {
                return null;
            }
            try {
                return client.stopWithSavepoint(false, target, SavepointFormatType.CANONICAL).get();
            } finally {
                client.getJobExecutionResult().handle((r, e) -> null).get();
            }
        } finally {
            Files.deleteIfExists(planFile);
        }
    }

    /** Installs the scripted rows (k = 1..20, three rows each; v = row number, so every key's sum
     *  differs) and returns each key's final {count, sum}. */
    private static Map<Long, long[]> installScript() {
        List<Script.Step> steps = new ArrayList<>();
        Map<Long, long[]> want = new TreeMap<>();
        for (long i = 0; i < ROWS; i++) {
            long k = i % KEYS + 1;
            steps.add(Script.Step.emit("src", "+I", List.of(k, i)));
            long[] cs = want.computeIfAbsent(k, x -> new long[2]);
            cs[0]++;
            cs[1] += i;
        }
        Script.install(steps, 0);
        return want;
    }

    /** Executes planFile (parallelism 2, conf) and returns the job once the sink has seen every
     *  key's final count, or null after cancelling it when that takes over 60 s. */
    private static JobClient runCounted(Path planFile, Configuration conf, Map<Long, long[]> want) throws Exception {
        conf.set(CoreOptions.DEFAULT_PARALLELISM, PARALLELISM);
        TableEnvironment tEnv = TableEnvironment.create(
                EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
        TableResult result = tEnv.loadPlan(PlanReference.fromFile(planFile.toFile())).execute();
        JobClient client = result.getJobClient().orElseThrow();
        long deadline = System.currentTimeMillis() + 60_000;
        while (!allCounted(want)) {
            if (System.currentTimeMillis() > deadline) {
                client.cancel();
                System.err.println("sql-savepoint: the sink did not see every key's final count in 60 s: "
                        + Script.output());
                return null;
            }
            Thread.sleep(100);
        }
        return client;
    }

    /** True once the last row the sink saw for every key carries that key's final count and sum. */
    private static boolean allCounted(Map<Long, long[]> want) {
        Map<Long, String> last = new TreeMap<>();
        for (String row : Script.output().getOrDefault("counts", List.of())) {
            // Row.toString: "+I[3, 3, 105]"
            String[] f = row.substring(3, row.length() - 1).split(", ");
            if (row.startsWith("+")) {
                last.put(Long.parseLong(f[0]), f[1] + "," + f[2]);
            }
        }
        for (Map.Entry<Long, long[]> e : want.entrySet()) {
            if (!(e.getValue()[0] + "," + e.getValue()[1]).equals(last.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    /** The savepoint's accState entries must be exactly the counts and sums of the scripted input. */
    private static void checkAgainstInput(ArrayNode entries, Map<Long, long[]> want) {
        Map<Long, String> got = new TreeMap<>();
        for (JsonNode e : entries) {
            got.put(e.get("key").get(0).asLong(), e.get("value").get(0).asLong() + "," + e.get("value").get(1).asLong());
        }
        Map<Long, String> exp = new TreeMap<>();
        want.forEach((k, v) -> exp.put(k, v[0] + "," + v[1]));
        if (!got.equals(exp)) {
            throw new IllegalStateException("accState read back " + got + ", the input gives " + exp);
        }
    }

    /** Rows of savepoint_metadata(path), in Flink's order, with the expectation schema's names. */
    static ArrayNode metadata(String path) throws Exception {
        TableEnvironment tEnv = TableEnvironment.create(EnvironmentSettings.inBatchMode());
        tEnv.getConfig().set("parallelism.default", "1");
        tEnv.loadModule("state", StateModule.INSTANCE);
        ArrayNode rows = Json.arr();
        TableResult r = tEnv.executeSql("SELECT * FROM savepoint_metadata('" + path.replace("'", "''") + "')");
        try (CloseableIterator<Row> it = r.collect()) {
            while (it.hasNext()) {
                Row row = it.next();
                ObjectNode o = Json.obj();
                o.put("checkpointId", ((Number) row.getField("checkpoint-id")).longValue());
                o.put("operatorName", (String) row.getField("operator-name"));
                String uid = (String) row.getField("operator-uid");
                if (uid == null || uid.isEmpty()) {
                    o.putNull("operatorUid");
                } else {
                    o.put("operatorUid", uid);
                }
                o.put("operatorUidHash", (String) row.getField("operator-uid-hash"));
                o.put("parallelism", ((Number) row.getField("operator-parallelism")).intValue());
                o.put("maxParallelism", ((Number) row.getField("operator-max-parallelism")).intValue());
                o.put("subtaskStateCount", ((Number) row.getField("operator-subtask-state-count")).intValue());
                o.put("coordinatorStateSizeInBytes",
                        ((Number) row.getField("operator-coordinator-state-size-in-bytes")).longValue());
                o.put("totalSizeInBytes", ((Number) row.getField("operator-total-size-in-bytes")).longValue());
                rows.add(o);
            }
        }
        return rows;
    }

    static RowType bigints(String... names) {
        List<RowType.RowField> fields = new ArrayList<>();
        for (String n : names) {
            fields.add(new RowType.RowField(n, new BigIntType()));
        }
        return new RowType(fields);
    }

    /** The group aggregate's accState, read with the State Processor API, sorted by key. */
    static ArrayNode accState(String path, String uid) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        SavepointReader reader = SavepointReader.read(env, path);
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<String> it = reader.readKeyedState(
                        OperatorIdentifier.forUid(uid),
                        new AccStateDump(),
                        InternalTypeInfo.of(bigints("k")),
                        org.apache.flink.api.common.typeinfo.Types.STRING)
                .executeAndCollect()) {
            it.forEachRemaining(lines::add);
        }
        ArrayNode entries = Json.arr();
        lines.stream().map(Json::parse).sorted(Comparator.comparing(Json::compact)).forEach(entries::add);
        return entries;
    }

    /** Emits {"key":[k],"namespace":null,"userKey":null,"value":[count,sum]} per key. */
    static final class AccStateDump extends KeyedStateReaderFunction<RowData, String> {
        private transient ValueState<RowData> acc;

        @Override
        public void open(OpenContext ctx) {
            acc = getRuntimeContext().getState(
                    new ValueStateDescriptor<>("accState", InternalTypeInfo.of(bigints("count", "sum"))));
        }

        @Override
        public void readKey(RowData key, Context ctx, Collector<String> out) throws Exception {
            RowData v = acc.value();
            ObjectNode o = Json.obj();
            o.set("key", Json.arr().add(key.isNullAt(0) ? null : key.getLong(0)));
            o.putNull("namespace");
            o.putNull("userKey");
            if (v == null) {
                o.putNull("value");
            } else {
                ArrayNode a = Json.arr();
                for (int i = 0; i < v.getArity(); i++) {
                    if (v.isNullAt(i)) {
                        a.addNull();
                    } else {
                        a.add(v.getLong(i));
                    }
                }
                o.set("value", a);
            }
            out.collect(Json.compact(o));
        }
    }
}

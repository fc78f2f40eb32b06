package dev.statecraft.oracle.savepoints;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.AppendingState;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.contrib.streaming.state.EmbeddedRocksDBStateBackend;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.state.api.functions.WindowReaderFunction;
import org.apache.flink.state.table.module.StateModule;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

import dev.statecraft.oracle.common.Cluster;
import dev.statecraft.oracle.common.Json;

/**
 * Reads everything a savepoint holds for the operators an expectation describes, with Flink's
 * State Processor API and its savepoint_metadata SQL function, and returns a fresh expectation.
 * All operators are read by one batch job: each reader emits JSON lines tagged with the
 * operator's index, which are then gathered into the expectation's sorted arrays.
 */
final class StateDump {
    private StateDump() {}

    static StateBackend backend(String name) {
        if ("rocksdb".equals(name)) return new EmbeddedRocksDBStateBackend();
        if (name == null || "hashmap".equals(name)) return new HashMapStateBackend();
        if ("forst".equals(name)) {
            // By name: Flink 1.20's oracle build has no ForSt dependency.
            try {
                return (StateBackend) Class.forName("org.apache.flink.state.forst.ForStStateBackend").getConstructor().newInstance();
            } catch (ReflectiveOperationException e) {
                throw new IllegalArgumentException("backend forst: " + e, e);
            }
        }
        throw new IllegalArgumentException("unknown backend " + name);
    }

    static StreamExecutionEnvironment localEnv(int parallelism) {
        Configuration conf = new Configuration();
        conf.setString("taskmanager.numberOfTaskSlots", "4");
        conf.setString("rest.bind-port", "0");
        // Batch jobs otherwise let the adaptive scheduler pick parallelism from data volume; a
        // savepoint written by the State Processor API must keep the operator's parallelism.
        conf.setString("execution.batch.adaptive.auto-parallelism.enabled", "false");
        StreamExecutionEnvironment env = Cluster.stream(parallelism, conf);
        return env;
    }

    /** Reads the savepoint at path as described by description; returns a complete expectation. */
    static ObjectNode dump(String path, JsonNode description) throws Exception {
        List<Specs.Operator> ops = Specs.parse(description);
        ArrayNode metadata = metadata(path);
        Map<String, JsonNode> rowsByHash = new HashMap<>();
        for (JsonNode r : metadata) rowsByHash.put(r.get("operatorUidHash").asText(), r);

        for (Specs.Operator op : ops) {
            JsonNode row = rowsByHash.get(op.hash());
            if (row == null) {
                throw new IllegalStateException("operator " + op.label() + " (hash " + op.hash() + ") is not in savepoint " + path);
            }
            op.parallelism = row.get("parallelism").asInt();
            op.maxParallelism = row.get("maxParallelism").asInt();
        }
        // Every operator that carries state must be described, or the expectation would be partial.
        for (JsonNode r : metadata) {
            boolean described = ops.stream().anyMatch(o -> o.hash().equals(r.get("operatorUidHash").asText()));
            if (!described && (r.get("totalSizeInBytes").asLong() > 0 || r.get("coordinatorStateSizeInBytes").asLong() > 0)) {
                throw new IllegalStateException("savepoint operator " + Json.compact(r) + " has state the description does not name");
            }
        }

        StreamExecutionEnvironment env = localEnv(2);
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        SavepointReader reader = SavepointReader.read(env, path, backend(Json.text(description, "backend")));
        List<DataStream<String>> streams = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) streams.addAll(readers(reader, i, ops.get(i)));

        Map<Integer, List<JsonNode>> lines = new HashMap<>();
        if (!streams.isEmpty()) {
            DataStream<String> all = streams.get(0);
            if (streams.size() > 1) {
                @SuppressWarnings("unchecked")
                DataStream<String>[] rest = streams.subList(1, streams.size()).toArray(new DataStream[0]);
                all = all.union(rest);
            }
            try (CloseableIterator<String> it = all.executeAndCollect("statecraft-read-savepoint")) {
                while (it.hasNext()) {
                    JsonNode l = Json.parse(it.next());
                    lines.computeIfAbsent(l.get("op").asInt(), k -> new ArrayList<>()).add(l);
                }
            }
        }

        ObjectNode out = Json.obj();
        out.put("flinkVersion", org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
        out.set("job", description.get("job"));
        out.put("backend", description.path("backend").asText("hashmap"));
        out.put("format", description.path("format").asText("canonical"));
        out.put("compression", description.path("compression").asBoolean(false));
        out.set("metadata", metadata);
        ArrayNode opsOut = Json.arr();
        for (int i = 0; i < ops.size(); i++) opsOut.add(assemble(ops.get(i), lines.getOrDefault(i, List.of())));
        out.set("operators", Json.sorted(opsOut, Comparator.comparing(o -> o.get("uidHash").asText())));
        return out;
    }

    /** Rows of savepoint_metadata(path), in the order Flink returns them, with camelCase names. */
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
                if (uid == null || uid.isEmpty()) o.putNull("operatorUid");
                else o.put("operatorUid", uid);
                o.put("operatorUidHash", (String) row.getField("operator-uid-hash"));
                o.put("parallelism", ((Number) row.getField("operator-parallelism")).intValue());
                o.put("maxParallelism", ((Number) row.getField("operator-max-parallelism")).intValue());
                o.put("subtaskStateCount", ((Number) row.getField("operator-subtask-state-count")).intValue());
                o.put("coordinatorStateSizeInBytes", ((Number) row.getField("operator-coordinator-state-size-in-bytes")).longValue());
                o.put("totalSizeInBytes", ((Number) row.getField("operator-total-size-in-bytes")).longValue());
                rows.add(o);
            }
        }
        return rows;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static List<DataStream<String>> readers(SavepointReader reader, int idx, Specs.Operator op) throws Exception {
        List<DataStream<String>> out = new ArrayList<>();
        if (op.isKeyed()) {
            TypeInformation keyTi = StateTypes.info(op.keyType());
            if (op.window()) {
                if (op.uid == null) throw new IllegalArgumentException(op.label() + ": window operators are read by uid only");
                // The window contents first; any other state is per-window state of the window
                // function (map state only), read through the context's windowState().
                Specs.KeyedState s = op.keyed.get(0);
                if (!s.name.equals(Specs.WINDOW_CONTENTS) || op.keyed.stream().skip(1).anyMatch(x -> !x.kind.equals("map"))) {
                    throw new IllegalArgumentException(op.label() + ": a window operator holds " + Specs.WINDOW_CONTENTS + " first, then per-window map states only");
                }
                TypeInformation vTi = StateTypes.info(s.valueType);
                WindowDump fn = new WindowDump(idx, s, op.keyType(), op.keyed.subList(1, op.keyed.size()));
                if (s.kind.equals("aggregating")) {
                    out.add(reader.window(op.windowSerializer()).aggregate(op.uid, new Specs.Identity(), fn, keyTi, vTi, Types.STRING));
                } else if (s.kind.equals("reducing")) {
                    out.add(reader.window(op.windowSerializer()).reduce(op.uid, new Specs.KeepFirst(), fn, keyTi, vTi, Types.STRING));
                } else {
                    throw new IllegalArgumentException(op.label() + ": window state kind " + s.kind + " is not supported");
                }
            } else {
                out.add(reader.readKeyedState(op.id(), new KeyedDump(idx, op), keyTi, Types.STRING));
            }
        }
        for (Specs.OpState s : op.opStates) {
            switch (s.mode) {
                case "split":
                    out.add(reader.readListState(op.id(), s.name, (TypeInformation) StateTypes.info(s.elementType)).map(new ElementLine(idx, s)).returns(Types.STRING));
                    break;
                case "union":
                    out.add(reader.readUnionState(op.id(), s.name, (TypeInformation) StateTypes.info(s.elementType)).map(new ElementLine(idx, s)).returns(Types.STRING));
                    break;
                case "broadcast":
                    out.add(reader.readBroadcastState(op.id(), s.name, (TypeInformation) StateTypes.info(s.keyType), (TypeInformation) StateTypes.info(s.elementType)).map(new ElementLine(idx, s)).returns(Types.STRING));
                    break;
                default:
                    throw new IllegalArgumentException(op.label() + ": operator state " + s.name + ": unknown mode " + s.mode);
            }
        }
        return out;
    }

    /** Entries of one keyed state for the current key and namespace (empty when absent). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static List<ObjectNode> entries(Specs.KeyedState s, State st, Object key, JsonNode ns) throws Exception {
        List<ObjectNode> out = new ArrayList<>();
        JsonNode k = StateTypes.toJson(s.keyType, key);
        switch (s.kind) {
            case "value": {
                Object v = ((ValueState) st).value();
                if (v != null) out.add(entry(k, ns, null, StateTypes.toJson(s.valueType, v)));
                break;
            }
            case "list": {
                Iterable<Object> it = (Iterable<Object>) ((ListState) st).get();
                ArrayNode a = Json.arr();
                if (it != null) for (Object v : it) a.add(StateTypes.toJson(s.valueType, v));
                if (a.size() > 0) out.add(entry(k, ns, null, a));
                break;
            }
            case "map": {
                Iterable<Map.Entry<Object, Object>> it = ((MapState) st).entries();
                if (it != null) {
                    for (Map.Entry<Object, Object> e : it) {
                        out.add(entry(k, ns, StateTypes.toJson(s.userKeyType, e.getKey()), StateTypes.toJson(s.valueType, e.getValue())));
                    }
                }
                break;
            }
            case "reducing":
            case "aggregating": {
                Object v = ((AppendingState) st).get();
                if (v != null) out.add(entry(k, ns, null, StateTypes.toJson(s.valueType, v)));
                break;
            }
            default:
                throw new IllegalArgumentException("unknown state kind " + s.kind);
        }
        return out;
    }

    static ObjectNode entry(JsonNode key, JsonNode ns, JsonNode userKey, JsonNode value) {
        ObjectNode e = Json.obj();
        e.set("key", key);
        e.set("namespace", ns == null ? Json.F.nullNode() : ns);
        e.set("userKey", userKey == null ? Json.F.nullNode() : userKey);
        e.set("value", value);
        return e;
    }

    static ObjectNode timer(String kind, JsonNode key, JsonNode ns, long ts) {
        ObjectNode t = Json.obj();
        t.put("kind", kind);
        t.set("key", key);
        t.set("namespace", ns == null ? Json.F.nullNode() : ns);
        t.put("timestamp", ts);
        return t;
    }

    /** A namespace in JSON as statecraft's dump shows it: a TimeWindow's bounds, "GlobalWindow", a
     *  NamedWindow's {serializer, base64}, or null (VoidNamespace). */
    static JsonNode namespace(Object ns) {
        if (ns instanceof TimeWindow) return window((TimeWindow) ns);
        if (ns instanceof GlobalWindow) return Json.F.textNode("GlobalWindow");
        if (ns instanceof NamedWindow) return NamedWindow.json((NamedWindow) ns);
        if (ns instanceof SlotWindow) return SlotWindow.json((SlotWindow) ns);
        return null;
    }

    static ObjectNode window(TimeWindow w) {
        ObjectNode o = Json.obj();
        o.put("start", w.getStart());
        o.put("end", w.getEnd());
        return o;
    }

    /** Entries are ordered by the canonical compact text of (key, namespace, userKey). */
    static final Comparator<JsonNode> ENTRY_ORDER = Comparator
            .comparing((JsonNode e) -> Json.compact(e.get("key")))
            .thenComparing(e -> Json.compact(e.get("namespace")))
            .thenComparing(e -> Json.compact(e.get("userKey")))
            .thenComparing(Json::compact);

    /** Timers by (key, namespace, kind, timestamp), timestamps numerically. */
    static final Comparator<JsonNode> TIMER_ORDER = Comparator
            .comparing((JsonNode e) -> Json.compact(e.get("key")))
            .thenComparing(e -> Json.compact(e.get("namespace")))
            .thenComparing(e -> e.get("kind").asText())
            .thenComparingLong(e -> e.get("timestamp").asLong());

    /** Operator-state entries by canonical text of (key, value). */
    static final Comparator<JsonNode> ELEMENT_ORDER = Comparator
            .comparing((JsonNode e) -> Json.compact(e.path("key")))
            .thenComparing(e -> Json.compact(e.get("value")));

    /** Builds one operator of the expectation from its spec and the lines read for it. */
    static ObjectNode assemble(Specs.Operator op, List<JsonNode> raw) {
        // The State Processor API may hand the same key to a reader twice (seen with RocksDB and
        // several states: its key iterator deduplicates only neighbouring keys), so identical
        // lines count once; two different values for one (key, namespace, userKey) are an error.
        Map<String, JsonNode> unique = new java.util.LinkedHashMap<>();
        for (JsonNode l : raw) unique.putIfAbsent(Json.compact(l), l);
        List<JsonNode> lines = new ArrayList<>(unique.values());
        Map<String, String> slots = new HashMap<>();
        for (JsonNode l : lines) {
            if (!l.get("t").asText().equals("entry")) continue;
            JsonNode e = l.get("e");
            String slot = l.get("state").asText() + "|" + Json.compact(e.get("key")) + "|" + Json.compact(e.get("namespace")) + "|" + Json.compact(e.get("userKey"));
            String prev = slots.put(slot, Json.compact(e.get("value")));
            if (prev != null) throw new IllegalStateException(op.label() + ": two values for " + slot + ": " + prev + " and " + Json.compact(e.get("value")));
        }
        ObjectNode o = Json.obj();
        if (op.uid == null) o.putNull("uid");
        else o.put("uid", op.uid);
        o.put("uidHash", op.hash());
        o.put("parallelism", op.parallelism);
        o.put("maxParallelism", op.maxParallelism);
        ArrayNode keyed = Json.arr();
        for (Specs.KeyedState s : op.keyed) {
            ObjectNode so = Json.obj();
            so.put("name", s.name);
            so.put("kind", s.kind);
            so.put("keyType", s.keyType);
            so.put("valueType", s.valueType);
            if (s.userKeyType == null) so.putNull("userKeyType");
            else so.put("userKeyType", s.userKeyType);
            so.put("ttl", s.ttl);
            if (s.namespace != null) so.put("namespace", s.namespace);
            ArrayNode es = Json.arr();
            for (JsonNode l : lines) {
                if (l.get("t").asText().equals("entry") && l.get("state").asText().equals(s.name)) es.add(l.get("e"));
            }
            so.set("entries", Json.sorted(es, ENTRY_ORDER));
            keyed.add(so);
        }
        o.set("keyedStates", Json.sorted(keyed, Comparator.comparing(s -> s.get("name").asText())));
        ArrayNode timers = Json.arr();
        for (JsonNode l : lines) if (l.get("t").asText().equals("timer")) timers.add(l.get("e"));
        windowTimers(op, lines, timers);
        o.set("timers", Json.sorted(timers, TIMER_ORDER));
        ArrayNode opStates = Json.arr();
        for (Specs.OpState s : op.opStates) {
            ObjectNode so = Json.obj();
            so.put("name", s.name);
            so.put("mode", s.mode);
            so.put("elementType", s.elementType);
            if (s.keyType == null) so.putNull("keyType");
            else so.put("keyType", s.keyType);
            ArrayNode es = Json.arr();
            for (JsonNode l : lines) {
                if (l.get("t").asText().equals("element") && l.get("state").asText().equals(s.name)) es.add(l.get("e"));
            }
            so.set("entries", Json.sorted(es, ELEMENT_ORDER));
            opStates.add(so);
        }
        o.set("operatorStates", Json.sorted(opStates, Comparator.comparing(s -> s.get("name").asText())));
        return o;
    }

    /**
     * A window reader sees, for each (key, window), all timers of the key. WindowOperator sets a
     * window's timer at window.maxTimestamp() (TimeWindow: end - 1; each "wtimer" line carries its
     * window's as "maxTs"), so each timer goes to the window of the
     * same key whose last millisecond it is; a timer that matches no window is an error, not a guess.
     */
    private static void windowTimers(Specs.Operator op, List<JsonNode> lines, ArrayNode timers) {
        Map<String, java.util.TreeSet<String>> seen = new java.util.TreeMap<>();
        Map<String, JsonNode> windows = new HashMap<>();
        for (JsonNode l : lines) {
            if (!l.get("t").asText().equals("wtimer")) continue;
            JsonNode t = l.get("e");
            String k = Json.compact(t.get("key"));
            seen.computeIfAbsent(k + "|" + t.get("kind").asText() + "|" + t.get("timestamp").asLong(), x -> new java.util.TreeSet<>());
            long maxTs = l.get("maxTs").asLong();
            JsonNode prev = windows.put(k + "|" + maxTs, t.get("namespace"));
            if (prev != null && !prev.equals(t.get("namespace"))) {
                throw new IllegalStateException(op.label() + ": windows " + Json.compact(prev) + " and " + Json.compact(t.get("namespace"))
                        + " of key " + k + " both end at " + maxTs + ": their timers cannot be told apart");
            }
        }
        for (JsonNode l : lines) {
            if (!l.get("t").asText().equals("wtimer")) continue;
            JsonNode t = l.get("e");
            String k = Json.compact(t.get("key"));
            long ts = t.get("timestamp").asLong();
            String id = k + "|" + t.get("kind").asText() + "|" + ts;
            JsonNode ns = windows.get(k + "|" + ts);
            if (ns == null) throw new IllegalStateException(op.label() + ": timer " + Json.compact(t) + " fires at the end of no window of its key");
            if (seen.get(id).add(Json.compact(ns))) timers.add(timer(t.get("kind").asText(), t.get("key"), ns, ts));
        }
    }

    static String line(int op, String t, String state, JsonNode e) {
        ObjectNode l = Json.obj();
        l.put("op", op);
        l.put("t", t);
        if (state != null) l.put("state", state);
        l.set("e", e);
        return Json.compact(l);
    }

    /** Registers a keyed state in a runtime context the way a user function would. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static State register(RuntimeContext ctx, Specs.KeyedState s) {
        Object d = Specs.descriptor(s);
        try {
            switch (s.kind) {
                case "value": return ctx.getState((ValueStateDescriptor) d);
                case "list": return ctx.getListState((ListStateDescriptor) d);
                case "map": return ctx.getMapState((MapStateDescriptor) d);
                case "reducing": return ctx.getReducingState((ReducingStateDescriptor) d);
                case "aggregating": return ctx.getAggregatingState((AggregatingStateDescriptor) d);
                default: throw new IllegalArgumentException("unknown state kind " + s.kind);
            }
        } catch (RuntimeException e) {
            throw stateError(s, e);
        }
    }

    /**
     * Flink's reason for refusing to register a state (a StateMigrationException names serializer
     * classes, not the state), prefixed with the state and its declared type. The reason becomes
     * this exception's own message and the original is kept as suppressed, not as cause, because
     * the judge reports the outermost and innermost messages of a cause chain.
     */
    static IllegalStateException stateError(Specs.KeyedState s, Exception e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        IllegalStateException x = new IllegalStateException("keyed state " + s.name + " (" + s.kind + " of " + s.valueType
                + (s.userKeyType != null ? ", user key " + s.userKeyType : "") + (s.ttl ? ", ttl" : "") + "): "
                + root.getClass().getSimpleName() + ": " + root.getMessage());
        x.addSuppressed(e);
        return x;
    }

    /** Reads every described keyed state and the timers of each key (VoidNamespace). */
    static final class KeyedDump extends KeyedStateReaderFunction<Object, String> {
        private final int idx;
        private final Specs.Operator op;
        private transient List<State> states;

        KeyedDump(int idx, Specs.Operator op) {
            this.idx = idx;
            this.op = op;
        }

        @Override
        public void open(OpenContext ctx) {
            states = new ArrayList<>();
            for (Specs.KeyedState s : op.keyed) states.add(register(getRuntimeContext(), s));
        }

        @Override
        public void readKey(Object key, Context ctx, Collector<String> out) throws Exception {
            for (int i = 0; i < op.keyed.size(); i++) {
                Specs.KeyedState s = op.keyed.get(i);
                for (ObjectNode e : entries(s, states.get(i), key, null)) out.collect(line(idx, "entry", s.name, e));
            }
            JsonNode k = StateTypes.toJson(op.keyType(), key);
            for (long ts : ctx.registeredEventTimeTimers()) out.collect(line(idx, "timer", null, timer("event", k, null, ts)));
            for (long ts : ctx.registeredProcessingTimeTimers()) out.collect(line(idx, "timer", null, timer("processing", k, null, ts)));
        }
    }

    /** Reads a window operator's contents (one value per key and window) and window timers. */
    @SuppressWarnings("rawtypes")
    static final class WindowDump extends WindowReaderFunction<Object, String, Object, org.apache.flink.streaming.api.windowing.windows.Window> {
        private final int idx;
        private final Specs.KeyedState s;
        private final String keyType;
        private final List<Specs.KeyedState> perWindow;

        WindowDump(int idx, Specs.KeyedState s, String keyType, List<Specs.KeyedState> perWindow) {
            this.idx = idx;
            this.s = s;
            this.keyType = keyType;
            this.perWindow = new ArrayList<>(perWindow);
        }

        @Override
        public void readWindow(Object key, Context<org.apache.flink.streaming.api.windowing.windows.Window> ctx, Iterable<Object> elements, Collector<String> out) throws Exception {
            JsonNode k = StateTypes.toJson(keyType, key);
            JsonNode ns = namespace(ctx.window());
            long maxTs = ctx.window().maxTimestamp();
            for (Object v : elements) {
                if (v != null) out.collect(line(idx, "entry", s.name, entry(k, ns, null, StateTypes.toJson(s.valueType, v))));
            }
            for (Specs.KeyedState m : perWindow) {
                MapState<Object, Object> st = ctx.windowState().getMapState(new MapStateDescriptor<Object, Object>(m.name,
                        (TypeInformation<Object>) StateTypes.info(m.userKeyType), (TypeInformation<Object>) StateTypes.info(m.valueType)));
                for (Map.Entry<Object, Object> e : st.entries()) {
                    out.collect(line(idx, "entry", m.name, entry(k, ns, StateTypes.toJson(m.userKeyType, e.getKey()), StateTypes.toJson(m.valueType, e.getValue()))));
                }
            }
            // The context reports every timer of the key, whatever its window; assemble() gives
            // each timer the window whose last millisecond it fires at (WindowOperator's rule).
            for (long ts : ctx.registeredEventTimeTimers()) out.collect(windowTimer(timer("event", k, ns, ts), maxTs));
            for (long ts : ctx.registeredProcessingTimeTimers()) out.collect(windowTimer(timer("processing", k, ns, ts), maxTs));
        }

        private String windowTimer(ObjectNode t, long maxTs) {
            ObjectNode l = (ObjectNode) Json.parse(line(idx, "wtimer", null, t));
            l.put("maxTs", maxTs);
            return Json.compact(l);
        }
    }

    /** One operator-state element (list, union) or broadcast entry as a line. */
    static final class ElementLine implements MapFunction<Object, String> {
        private final int idx;
        private final Specs.OpState s;

        ElementLine(int idx, Specs.OpState s) {
            this.idx = idx;
            this.s = s;
        }

        @Override
        public String map(Object v) {
            ObjectNode e = Json.obj();
            if (s.mode.equals("broadcast")) {
                Tuple2<?, ?> t = (Tuple2<?, ?>) v;
                e.set("key", StateTypes.toJson(s.keyType, t.f0));
                e.set("value", StateTypes.toJson(s.elementType, t.f1));
            } else {
                e.set("value", StateTypes.toJson(s.elementType, v));
            }
            return line(idx, "element", s.name, e);
        }
    }
}

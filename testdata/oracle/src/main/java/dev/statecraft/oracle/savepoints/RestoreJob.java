package dev.statecraft.oracle.savepoints;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.InternalTimerService;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.Triggerable;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

import dev.statecraft.oracle.common.Cluster;
import dev.statecraft.oracle.common.Json;

/**
 * Restores a DataStream job from a savepoint, built from an expectation alone: one operator per
 * expected operator, with its UID (or UID hash), parallelism, max parallelism and state
 * descriptors. Flink refuses the restore if the savepoint holds state for an operator the job does
 * not claim (ignore-unclaimed-state is false), or if a max parallelism differs. Each restored
 * subtask reports, from initializeState, every key, value, timer and operator-state element its
 * backends hold; the job is then cancelled and the report returned as operators in expectation form.
 */
final class RestoreJob {
    private RestoreJob() {}

    /** Lines reported by restored subtasks, per operator index; filled inside the MiniCluster JVM. */
    static final Map<Integer, List<JsonNode>> LINES = new ConcurrentHashMap<>();
    static final Map<Integer, Integer> REPORTED = new ConcurrentHashMap<>();
    /**
     * Why a restored subtask failed in initializeState (e.g. Flink's StateMigrationException when a
     * declared type is incompatible with the savepoint's serializer snapshot). Kept here because
     * once the job has failed the local MiniCluster shuts down, and the job result that carries
     * the cause can no longer be fetched ("MiniCluster is not yet running").
     */
    static final List<String> FAILURES = java.util.Collections.synchronizedList(new ArrayList<>());

    /** Window operators keep their timers in this timer service; process functions in "user-timers". */
    static final String WINDOW_TIMERS = "window-timers";
    static final String USER_TIMERS = "user-timers";

    /**
     * Restores the operators ops (parsed from an expectation) into the named state backend;
     * returns them as restored, or throws with Flink's reason for refusing.
     */
    static ArrayNode restore(String savepoint, List<Specs.Operator> ops, String backend) throws Exception {
        LINES.clear();
        REPORTED.clear();
        FAILURES.clear();
        int slots = 1;
        for (Specs.Operator op : ops) slots = Math.max(slots, op.parallelism + 1);

        Configuration conf = new Configuration();
        conf.setString("execution.state-recovery.path", savepoint);
        conf.setString("execution.state-recovery.ignore-unclaimed-state", "false");
        conf.setString("state.backend.type", backend);
        // timers in RocksDB column families, so that Flink's entry count includes them (see completeness)
        conf.setString("state.backend.rocksdb.timer-service.factory", "ROCKSDB");
        conf.setString("restart-strategy.type", "none");
        conf.setString("taskmanager.numberOfTaskSlots", Integer.toString(slots));
        conf.setString("rest.bind-port", "0");
        StreamExecutionEnvironment env = Cluster.stream(1, conf);

        DataStream<Long> src = env.addSource(new FixtureFunctions.FixedSource(0), "restore-source", Types.LONG)
                .uid("statecraft-restore-source").setParallelism(1);
        for (int i = 0; i < ops.size(); i++) {
            Specs.Operator op = ops.get(i);
            if (op.parallelism <= 0 || op.maxParallelism <= 0) throw new IllegalArgumentException(op.label() + ": expectation lacks parallelism or maxParallelism");
            SingleOutputStreamOperator<String> t;
            if (op.isKeyed()) {
                @SuppressWarnings({"unchecked", "rawtypes"})
                TypeInformation<Object> kt = (TypeInformation) StateTypes.info(op.keyType());
                t = src.keyBy(new NoKey(), kt).transform("restore-" + i, Types.STRING, new Reporter(i, op));
            } else {
                t = src.transform("restore-" + i, Types.STRING, new Reporter(i, op));
            }
            if (op.uid != null) t.uid(op.uid);
            else t.setUidHash(op.uidHash);
            t.setParallelism(op.parallelism).setMaxParallelism(op.maxParallelism);
        }

        JobClient client = env.executeAsync("statecraft-judge-restore");
        try {
            long deadline = System.currentTimeMillis() + 120_000;
            while (!allReported(ops)) {
                JobStatus st;
                try {
                    st = client.getJobStatus().get();
                } catch (Exception e) {
                    // a failed job takes the local MiniCluster down with it; the reason was kept
                    throw failure(e);
                }
                if (st.isGloballyTerminalState()) {
                    try {
                        client.getJobExecutionResult().get();
                    } catch (Exception e) {
                        throw failure(e);
                    }
                    throw new IllegalStateException("restore job ended (" + st + ") before every subtask reported");
                }
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException("restore: subtasks did not report within 120 s");
                Thread.sleep(50);
            }
        } finally {
            try {
                client.cancel().get();
                client.getJobExecutionResult().get();
            } catch (Exception ignored) {
                // cancelled on purpose, or already failed (reported above)
            }
        }

        ArrayNode out = Json.arr();
        for (int i = 0; i < ops.size(); i++) {
            List<JsonNode> lines = LINES.getOrDefault(i, List.of());
            ObjectNode restored = assemble(ops.get(i), lines);
            completeness(ops.get(i), lines, restored);
            out.add(restored);
        }
        return out;
    }

    /**
     * The restored operator registered only the expected states, so a state the expectation does
     * not name would go unseen. Two checks close that gap: the operator-state names the backend
     * restored must be exactly the expected ones, and the backend's own count of keyed entries
     * must match the count implied by what was read. Heap counts one entry per (state, key,
     * namespace); RocksDB one per stored row: per user key for map state, plus one per timer.
     */
    private static void completeness(Specs.Operator op, List<JsonNode> lines, ObjectNode restored) {
        java.util.TreeSet<String> expectedNames = new java.util.TreeSet<>();
        for (Specs.OpState s : op.opStates) expectedNames.add(s.name);
        long counted = 0;
        String backend = null;
        for (JsonNode l : lines) {
            String t = l.get("t").asText();
            if (t.equals("opnames")) {
                java.util.TreeSet<String> got = new java.util.TreeSet<>();
                l.get("names").forEach(n -> got.add(n.asText()));
                if (!got.equals(expectedNames)) {
                    throw new IllegalStateException(op.label() + ": subtask " + l.get("sub").asInt() + " restored operator states " + got + ", the expectation names " + expectedNames);
                }
            } else if (t.equals("count")) {
                if (l.get("n").asLong() < 0) return;
                counted += l.get("n").asLong();
                backend = l.get("backend").asText();
            }
        }
        if (backend == null) return;
        long heap = 0, rows = 0;
        for (JsonNode s : restored.get("keyedStates")) {
            java.util.Set<String> slots = new java.util.HashSet<>();
            for (JsonNode e : s.get("entries")) slots.add(Json.compact(e.get("key")) + "|" + Json.compact(e.get("namespace")));
            heap += slots.size();
            rows += s.get("kind").asText().equals("map") ? s.get("entries").size() : slots.size();
        }
        rows += restored.get("timers").size();
        long want = backend.startsWith("Heap") ? heap : rows;
        if (counted != want) {
            throw new IllegalStateException(op.label() + ": the " + backend + " holds " + counted + " keyed state entries, the expected states account for " + want
                    + " (state the expectation does not name?)");
        }
    }

    /** The first failure a restored subtask recorded, else e's own messages. */
    private static IllegalStateException failure(Exception e) {
        synchronized (FAILURES) {
            if (!FAILURES.isEmpty()) {
                // the recorded reason is complete; e only says the cluster is gone
                IllegalStateException x = new IllegalStateException("restore failed: " + FAILURES.get(0));
                x.addSuppressed(e);
                return x;
            }
        }
        return new IllegalStateException("restore failed: " + Expect.rootMessage(e), e);
    }

    private static boolean allReported(List<Specs.Operator> ops) {
        for (int i = 0; i < ops.size(); i++) if (REPORTED.getOrDefault(i, 0) < ops.get(i).parallelism) return false;
        return true;
    }

    /**
     * Split list elements of all subtasks together make the state; union and broadcast state are
     * restored whole into every subtask, which is checked here before one copy is kept.
     */
    private static ObjectNode assemble(Specs.Operator op, List<JsonNode> lines) {
        List<JsonNode> kept = new ArrayList<>();
        Map<String, Map<Integer, List<String>>> copies = new java.util.TreeMap<>();
        for (JsonNode l : lines) {
            if (!l.get("t").asText().equals("element") || l.path("mode").asText().equals("split")) {
                kept.add(l);
                continue;
            }
            copies.computeIfAbsent(l.get("state").asText(), k -> new java.util.TreeMap<>())
                    .computeIfAbsent(l.get("sub").asInt(), k -> new ArrayList<>()).add(Json.compact(l.get("e")));
            if (l.get("sub").asInt() == 0) kept.add(l);
        }
        for (Map.Entry<String, Map<Integer, List<String>>> c : copies.entrySet()) {
            List<String> first = null;
            for (Map.Entry<Integer, List<String>> s : c.getValue().entrySet()) {
                List<String> sorted = s.getValue().stream().sorted().collect(Collectors.toList());
                if (first == null) first = sorted;
                else if (!first.equals(sorted)) {
                    throw new IllegalStateException(op.label() + ": operator state " + c.getKey() + ": subtask " + s.getKey() + " restored " + sorted + " but subtask 0 restored " + first);
                }
            }
        }
        // StateDump.assemble deduplicates identical lines; restored keyed state never repeats a slot.
        return StateDump.assemble(op, kept);
    }

    static final class NoKey implements KeySelector<Long, Object> {
        @Override
        public Object getKey(Long v) {
            throw new IllegalStateException("the restore job has no input");
        }
    }

    /** Registers the expected states on restore and reports what the backends hold. */
    static final class Reporter extends AbstractStreamOperator<String>
            implements OneInputStreamOperator<Long, String>, Triggerable<Object, Object> {
        private final int idx;
        private final Specs.Operator op;

        Reporter(int idx, Specs.Operator op) {
            this.idx = idx;
            this.op = op;
        }

        @Override
        @SuppressWarnings({"unchecked", "rawtypes"})
        public void initializeState(StateInitializationContext context) throws Exception {
            try {
                report(context);
            } catch (Exception e) {
                FAILURES.add(op.label() + " subtask " + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() + ": " + Expect.rootMessage(e));
                throw e;
            }
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private void report(StateInitializationContext context) throws Exception {
            super.initializeState(context);
            int sub = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            List<JsonNode> out = new ArrayList<>();
            // Names of every operator state the backend restored, before this operator registers
            // any: a state the expectation does not name shows up here.
            ObjectNode names = Json.obj();
            names.put("op", idx);
            names.put("t", "opnames");
            names.put("sub", sub);
            ArrayNode list = Json.arr();
            new java.util.TreeSet<>(getOperatorStateBackend().getRegisteredStateNames()).forEach(list::add);
            new java.util.TreeSet<>(getOperatorStateBackend().getRegisteredBroadcastStateNames()).forEach(list::add);
            names.set("names", list);
            out.add(names);
            for (Specs.OpState s : op.opStates) {
                TypeInformation et = StateTypes.info(s.elementType);
                switch (s.mode) {
                    case "split":
                    case "union": {
                        ListStateDescriptor d = new ListStateDescriptor<>(s.name, et);
                        ListState<Object> l = s.mode.equals("split") ? getOperatorStateBackend().getListState(d) : getOperatorStateBackend().getUnionListState(d);
                        for (Object v : l.get()) {
                            ObjectNode e = Json.obj();
                            e.set("value", StateTypes.toJson(s.elementType, v));
                            out.add(element(s, sub, e));
                        }
                        break;
                    }
                    case "broadcast": {
                        BroadcastState<Object, Object> b = getOperatorStateBackend().getBroadcastState(new MapStateDescriptor<>(s.name, StateTypes.info(s.keyType), et));
                        for (Map.Entry<Object, Object> kv : b.entries()) {
                            ObjectNode e = Json.obj();
                            e.set("key", StateTypes.toJson(s.keyType, kv.getKey()));
                            e.set("value", StateTypes.toJson(s.elementType, kv.getValue()));
                            out.add(element(s, sub, e));
                        }
                        break;
                    }
                    default:
                        throw new IllegalArgumentException("unknown operator state mode " + s.mode);
                }
            }
            if (op.isKeyed()) {
                for (Specs.KeyedState s : op.keyed) readKeyed(s, out);
                boolean window = op.window();
                TypeSerializer ns = window ? op.windowSerializer() : VoidNamespaceSerializer.INSTANCE;
                InternalTimerService<Object> timers = getInternalTimerService(window ? WINDOW_TIMERS : USER_TIMERS, ns, this);
                String kt = op.keyType();
                timers.forEachEventTimeTimer((n, ts) -> out.add(timerLine("event", kt, n, ts)));
                timers.forEachProcessingTimeTimer((n, ts) -> out.add(timerLine("processing", kt, n, ts)));
                ObjectNode count = Json.obj();
                count.put("op", idx);
                count.put("t", "count");
                count.put("sub", sub);
                count.put("backend", getKeyedStateBackend().getClass().getSimpleName());
                count.put("n", numEntries());
                out.add(count);
            }
            LINES.computeIfAbsent(idx, k -> java.util.Collections.synchronizedList(new ArrayList<>())).addAll(out);
            REPORTED.merge(idx, 1, Integer::sum);
        }

        /**
         * Flink restores state whose stored serializer snapshot is only "compatible after
         * migration" with the declared type (a POJO snapshot that still lists a dropped field or
         * lacks an added one): it reads the values with the old schema and converts them. The
         * values then match, yet the savepoint does not hold what a job of the new type writes.
         * A migrated savepoint must carry the new type's snapshot, so the judge demands that the
         * snapshot the savepoint stored for each state resolves as-is against the declared type
         * (or a reconfigured serializer, which involves no data conversion).
         */
        @SuppressWarnings({"unchecked", "rawtypes"})
        private void requireAsIs(Specs.KeyedState s) throws Exception {
            org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo mi = metaInfo(s.name);
            TypeSerializerSnapshot stored = mi.getPreviousStateSerializerSnapshot();
            if (stored == null) return; // registered now, not restored: the savepoint has no such state
            TypeSerializerSchemaCompatibility c = resolve(mi.getStateSerializer(), stored);
            if (c.isCompatibleAsIs() || c.isCompatibleWithReconfiguredSerializer()) return;
            throw new IllegalStateException("keyed state " + s.name + " (" + s.kind + " of " + s.valueType + (s.ttl ? ", ttl" : "")
                    + "): the savepoint's serializer snapshot is " + (c.isCompatibleAfterMigration() ? "compatible only after migration" : "not compatible")
                    + " with the declared type, not as is (Flink would convert the values on restore): stored "
                    + describe(stored) + ", declared " + describe(mi.getStateSerializer().snapshotConfiguration()));
        }

        /**
         * Resolves the declared serializer against the stored snapshot the way the backend does.
         * Flink 2.x wraps both sides in TTL-aware forms first (so that TTL can be switched on or
         * off by migration; list and map elements are wrapped too), and compares those; 1.20 has
         * no such classes and compares the plain ones. Reflection keeps this file compiling for both.
         */
        @SuppressWarnings({"unchecked", "rawtypes"})
        private static TypeSerializerSchemaCompatibility resolve(TypeSerializer declared, TypeSerializerSnapshot stored) throws Exception {
            Class<?> aware, wrapper;
            try {
                aware = Class.forName("org.apache.flink.runtime.state.ttl.TtlAwareSerializer");
                wrapper = Class.forName("org.apache.flink.runtime.state.ttl.TtlAwareSerializerSnapshotWrapper");
            } catch (ClassNotFoundException e) {
                return declared.snapshotConfiguration().resolveSchemaCompatibility(stored);
            }
            TypeSerializer d = (TypeSerializer) aware.getMethod("wrapTtlAwareSerializer", TypeSerializer.class).invoke(null, declared);
            Object w = wrapper.getConstructor(TypeSerializerSnapshot.class).newInstance(stored);
            TypeSerializerSnapshot s = (TypeSerializerSnapshot) wrapper.getMethod("getTtlAwareSerializerSnapshot").invoke(w);
            return d.snapshotConfiguration().resolveSchemaCompatibility(s);
        }

        /**
         * A snapshot for the judge's message: its class, nested snapshots in brackets, and for a
         * POJO the class and field order it stores. Best effort: a snapshot that cannot restore
         * its serializer is named by its class only.
         */
        private static String describe(TypeSerializerSnapshot<?> snap) {
            String d = snap.getClass().getSimpleName();
            try {
                if (snap instanceof org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot) {
                    List<String> parts = new ArrayList<>();
                    for (TypeSerializerSnapshot<?> n : ((org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot<?, ?>) snap).getNestedSerializerSnapshots()) {
                        parts.add(describe(n));
                    }
                    return d + parts;
                }
                if (snap instanceof org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot) {
                    TypeSerializer<?> p = snap.restoreSerializer();
                    Class<?> pc = org.apache.flink.api.java.typeutils.runtime.PojoSerializer.class;
                    java.lang.reflect.Field cf = pc.getDeclaredField("clazz"), ff = pc.getDeclaredField("fields");
                    cf.setAccessible(true);
                    ff.setAccessible(true);
                    List<String> names = new ArrayList<>();
                    for (java.lang.reflect.Field f : (java.lang.reflect.Field[]) ff.get(p)) names.add(f == null ? "(absent)" : f.getName());
                    return d + " " + ((Class<?>) cf.get(p)).getName() + names;
                }
            } catch (Exception | LinkageError e) {
                return d;
            }
            return d;
        }

        /** The backend's meta info of a registered keyed state (heap or RocksDB; both keep it private). */
        @SuppressWarnings("rawtypes")
        private org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo metaInfo(String name) throws Exception {
            Object b = getKeyedStateBackend();
            for (Class<?> c = b.getClass(); c != null; c = c.getSuperclass()) {
                for (String field : List.of("registeredKVStates", "kvStateInformation")) {
                    java.lang.reflect.Field f;
                    try {
                        f = c.getDeclaredField(field);
                    } catch (NoSuchFieldException e) {
                        continue;
                    }
                    f.setAccessible(true);
                    Object v = ((Map<?, ?>) f.get(b)).get(name);
                    if (v == null) throw new IllegalStateException("state " + name + " is not registered in " + b.getClass().getSimpleName());
                    Object mi = v instanceof org.apache.flink.runtime.state.heap.StateTable
                            ? ((org.apache.flink.runtime.state.heap.StateTable<?, ?, ?>) v).getMetaInfo()
                            : v.getClass().getField("metaInfo").get(v);
                    return (org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo) mi;
                }
            }
            throw new IllegalStateException("cannot find the registered states of " + b.getClass().getName() + " to check their serializer snapshots");
        }

        /** Entries of all restored keyed states (Flink's own count), or -1 if the backend has none. */
        private long numEntries() {
            Object b = getKeyedStateBackend();
            if (b instanceof org.apache.flink.runtime.state.heap.HeapKeyedStateBackend) {
                return ((org.apache.flink.runtime.state.heap.HeapKeyedStateBackend<?>) b).numKeyValueStateEntries();
            }
            if (b instanceof org.apache.flink.state.rocksdb.RocksDBKeyedStateBackend) {
                return ((org.apache.flink.state.rocksdb.RocksDBKeyedStateBackend<?>) b).numKeyValueStateEntries();
            }
            return -1;
        }

        private JsonNode timerLine(String kind, String keyType, Object ns, long ts) {
            JsonNode n = StateDump.namespace(ns);
            return Json.parse(StateDump.line(idx, "timer", null, StateDump.timer(kind, StateTypes.toJson(keyType, getCurrentKey()), n, ts)));
        }

        private JsonNode element(Specs.OpState s, int sub, ObjectNode e) {
            ObjectNode l = (ObjectNode) Json.parse(StateDump.line(idx, "element", s.name, e));
            l.put("sub", sub);
            l.put("mode", s.mode);
            return l;
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private void readKeyed(Specs.KeyedState s, List<JsonNode> out) throws Exception {
            Object d = Specs.descriptor(s, true);
            if (s.name.equals(Specs.WINDOW_CONTENTS)) {
                TypeSerializer ws = op.windowSerializer();
                Object sample = op.anyWindow();
                // register the state first so the backend knows it, then list what was restored
                try {
                    getPartitionedState(sample, ws, (org.apache.flink.api.common.state.StateDescriptor) d);
                } catch (Exception e) {
                    throw StateDump.stateError(s, e);
                }
                requireAsIs(s);
                List<Tuple2<Object, Object>> kns;
                try (Stream<Tuple2<Object, Object>> st = getKeyedStateBackend().getKeysAndNamespaces(s.name)) {
                    kns = st.collect(Collectors.toList());
                }
                for (Tuple2<Object, Object> kn : kns) {
                    setCurrentKey(kn.f0);
                    State state = getPartitionedState(kn.f1, ws, (org.apache.flink.api.common.state.StateDescriptor) d);
                    for (ObjectNode e : StateDump.entries(s, state, kn.f0, StateDump.namespace(kn.f1))) {
                        out.add(Json.parse(StateDump.line(idx, "entry", s.name, e)));
                    }
                }
                return;
            }
            State state;
            try {
                state = getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, (org.apache.flink.api.common.state.StateDescriptor) d);
            } catch (Exception e) {
                throw StateDump.stateError(s, e);
            }
            requireAsIs(s);
            List<Object> keys;
            try (Stream<Object> st = getKeyedStateBackend().getKeys(s.name, VoidNamespace.INSTANCE)) {
                keys = st.collect(Collectors.toList());
            }
            for (Object k : keys) {
                setCurrentKey(k);
                for (ObjectNode e : StateDump.entries(s, state, k, null)) out.add(Json.parse(StateDump.line(idx, "entry", s.name, e)));
            }
        }

        @Override
        public void processElement(StreamRecord<Long> element) {}

        @Override
        public void onEventTime(InternalTimer<Object, Object> timer) {}

        @Override
        public void onProcessingTime(InternalTimer<Object, Object> timer) {}
    }
}

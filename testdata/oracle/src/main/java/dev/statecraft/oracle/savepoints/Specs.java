package dev.statecraft.oracle.savepoints;

import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.state.api.OperatorIdentifier;

import dev.statecraft.oracle.common.Json;

/**
 * The state layout of a job as an expectation file describes it: operators (by UID or UID hash),
 * their keyed states (name, kind, types, TTL) and operator states. Reading a savepoint with the
 * State Processor API, restoring a job from it and bootstrapping a new one all start from this,
 * so that an expectation rewritten by the migrate feature (new UID, value type, max parallelism)
 * is read exactly as it says.
 */
final class Specs {
    private Specs() {}

    /** Name of the window operator's contents state (WindowOperator); marks a window operator. */
    static final String WINDOW_CONTENTS = "window-contents";
    static final String NAMED_WINDOW = "NamedWindow";
    static final String SLOT_WINDOW = "SlotWindow";

    static final class KeyedState implements Serializable {
        String name, kind, keyType, valueType, userKeyType;
        /** The window operator's namespace: TimeWindow (absent), GlobalWindow, NamedWindow or
         *  SlotWindow (the oracle's own window classes, whose serializers statecraft cannot decode). */
        String namespace;
        boolean ttl;
        /**
         * When positive, the restore judges TTL timestamps: the job declares this TTL (processing
         * time, expired never returned), so an entry is visible iff its ttlTimestamp + ttlMillis
         * lies after the restore's clock (see RestoreJob.ttlView).
         */
        long ttlMillis;
    }

    static final class OpState implements Serializable {
        String name, mode, elementType, keyType;
    }

    static final class Operator implements Serializable {
        String uid, uidHash;
        int parallelism, maxParallelism;
        List<KeyedState> keyed = new ArrayList<>();
        List<OpState> opStates = new ArrayList<>();

        boolean window() {
            return keyed.stream().anyMatch(s -> s.name.equals(WINDOW_CONTENTS));
        }

        /** A window operator's windows are GlobalWindows (else TimeWindows). */
        boolean globalWindows() {
            return keyed.stream().anyMatch(s -> s.name.equals(WINDOW_CONTENTS) && "GlobalWindow".equals(s.namespace));
        }

        /** A window operator's windows are NamedWindows. */
        boolean namedWindows() {
            return keyed.stream().anyMatch(s -> s.name.equals(WINDOW_CONTENTS) && NAMED_WINDOW.equals(s.namespace));
        }

        /** A window operator's windows are SlotWindows. */
        boolean slotWindows() {
            return keyed.stream().anyMatch(s -> s.name.equals(WINDOW_CONTENTS) && SLOT_WINDOW.equals(s.namespace));
        }

        /** The serializer of a window operator's namespaces. */
        @SuppressWarnings("rawtypes")
        org.apache.flink.api.common.typeutils.TypeSerializer windowSerializer() {
            if (namedWindows()) return new NamedWindow.Serializer();
            if (slotWindows()) return new SlotWindow.Serializer();
            return globalWindows() ? new org.apache.flink.streaming.api.windowing.windows.GlobalWindow.Serializer()
                    : new org.apache.flink.streaming.api.windowing.windows.TimeWindow.Serializer();
        }

        /** A window of the operator's class, to register its state under before listing it. */
        Object anyWindow() {
            if (namedWindows()) return new NamedWindow("", 0);
            if (slotWindows()) return new SlotWindow(0);
            return globalWindows() ? org.apache.flink.streaming.api.windowing.windows.GlobalWindow.get()
                    : new org.apache.flink.streaming.api.windowing.windows.TimeWindow(0, 1);
        }

        boolean isKeyed() {
            return !keyed.isEmpty();
        }

        String keyType() {
            return keyed.isEmpty() ? null : keyed.get(0).keyType;
        }

        OperatorIdentifier id() {
            return uid != null ? OperatorIdentifier.forUid(uid) : OperatorIdentifier.forUidHash(uidHash);
        }

        String hash() {
            return id().getOperatorId().toHexString();
        }

        String label() {
            return uid != null ? "uid " + uid : "uidHash " + uidHash;
        }
    }

    static List<Operator> parse(JsonNode expectation) {
        List<Operator> out = new ArrayList<>();
        JsonNode ops = expectation.get("operators");
        if (ops == null || !ops.isArray()) throw new IllegalArgumentException("expectation has no operators array");
        for (JsonNode o : ops) {
            Operator op = new Operator();
            op.uid = Json.text(o, "uid");
            op.uidHash = Json.text(o, "uidHash");
            if (op.uid == null && op.uidHash == null) throw new IllegalArgumentException("operator with neither uid nor uidHash");
            op.parallelism = o.path("parallelism").asInt(0);
            op.maxParallelism = o.path("maxParallelism").asInt(0);
            for (JsonNode s : o.path("keyedStates")) {
                KeyedState k = new KeyedState();
                k.name = Json.text(s, "name");
                k.kind = Json.text(s, "kind");
                k.keyType = Json.text(s, "keyType");
                k.valueType = Json.text(s, "valueType");
                k.userKeyType = Json.text(s, "userKeyType");
                k.ttl = s.path("ttl").asBoolean(false);
                k.namespace = Json.text(s, "namespace");
                k.ttlMillis = s.path("ttlMillis").asLong(0);
                if (k.ttlMillis > 0 && !k.ttl) throw new IllegalArgumentException(op.label() + ": state " + k.name + " has ttlMillis but no ttl");
                if (k.namespace != null && !List.of("TimeWindow", "GlobalWindow", NAMED_WINDOW, SLOT_WINDOW).contains(k.namespace)) {
                    throw new IllegalArgumentException(op.label() + ": state " + k.name + ": unknown namespace " + k.namespace);
                }
                if (k.namespace != null && !k.name.equals(WINDOW_CONTENTS) && !(SLOT_WINDOW.equals(k.namespace) && k.kind.equals("map"))) {
                    throw new IllegalArgumentException(op.label() + ": state " + k.name + ": only " + WINDOW_CONTENTS + " declares a namespace");
                }
                StateTypes.info(k.keyType);
                StateTypes.info(k.valueType);
                if (k.kind.equals("map")) StateTypes.info(k.userKeyType);
                if (op.keyType() != null && !op.keyType().equals(k.keyType)) {
                    throw new IllegalArgumentException(op.label() + ": states with different key types");
                }
                op.keyed.add(k);
            }
            for (JsonNode s : o.path("operatorStates")) {
                OpState k = new OpState();
                k.name = Json.text(s, "name");
                k.mode = Json.text(s, "mode");
                k.elementType = Json.text(s, "elementType");
                k.keyType = Json.text(s, "keyType");
                op.opStates.add(k);
            }
            out.add(op);
        }
        return out;
    }

    /**
     * TTL used when reading or restoring TTL state. The TTL duration is not part of the stored
     * serializer, but it decides what counts as expired at read time: fixtures are written with a
     * 1-day TTL and read weeks later, so readers use a century and return expired values anyway.
     */
    static final StateTtlConfig READ_TTL = StateTtlConfig.newBuilder(Duration.ofDays(36500))
            .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
            .setStateVisibility(StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)
            .build();

    /** The TTL a state's descriptor gets where READ_TTL applies, by state name: READ_TTL, except
     *  while ttl-compaction reads a savepoint with its job's own TTLs to see what Flink returns of
     *  expired entries (TtlCompaction.jobTtlEntries; a served oracle runs one command at a time). */
    static volatile java.util.function.Function<String, StateTtlConfig> readTtl = name -> READ_TTL;

    static StateDescriptor<?, ?> descriptor(KeyedState s) {
        return descriptor(s, false);
    }

    /**
     * The state's descriptor; with checkTtl, a state with ttlMillis declares that TTL instead of
     * READ_TTL, never returning expired values, and without background cleanup (reading an
     * expired value is what removes it).
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static StateDescriptor<?, ?> descriptor(KeyedState s, boolean checkTtl) {
        TypeInformation v = StateTypes.info(s.valueType);
        StateDescriptor<?, ?> d;
        switch (s.kind) {
            case "value": d = new ValueStateDescriptor<>(s.name, v); break;
            case "list": d = new ListStateDescriptor<>(s.name, v); break;
            case "map": d = new MapStateDescriptor<>(s.name, StateTypes.info(s.userKeyType), v); break;
            case "reducing": d = new ReducingStateDescriptor<>(s.name, new KeepFirst(), v); break;
            case "aggregating": d = new AggregatingStateDescriptor<>(s.name, new Identity(), v); break;
            default: throw new IllegalArgumentException("state " + s.name + ": unknown kind " + s.kind);
        }
        if (s.ttl && checkTtl && s.ttlMillis > 0) {
            d.enableTimeToLive(StateTtlConfig.newBuilder(Duration.ofMillis(s.ttlMillis))
                    .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                    .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                    .disableCleanupInBackground()
                    .build());
        } else if (s.ttl) {
            d.enableTimeToLive(readTtl.apply(s.name));
        }
        return d;
    }

    /** Reducer for reading and bootstrapping: the stored value is what we want, never a combination. */
    static final class KeepFirst implements ReduceFunction<Object> {
        @Override
        public Object reduce(Object a, Object b) {
            return b;
        }
    }

    /**
     * Aggregate whose input, accumulator and result are the stored accumulator: reading returns
     * what is stored, and adding a value when bootstrapping stores that value.
     */
    static final class Identity implements AggregateFunction<Object, Object, Object> {
        @Override
        public Object createAccumulator() {
            return null;
        }

        @Override
        public Object add(Object value, Object acc) {
            return value;
        }

        @Override
        public Object getResult(Object acc) {
            return acc;
        }

        @Override
        public Object merge(Object a, Object b) {
            return b;
        }
    }
}

package dev.statecraft.oracle.compat;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.runtime.SavepointLoader;

import dev.statecraft.oracle.common.Json;

/**
 * The expectation's {@code metadata} rows for Flink versions without the State Processor API's
 * {@code savepoint_metadata()} SQL function (1.20.x has none; it came with 2.x). The rows are
 * built from the same source that function reads, Flink's own {@link SavepointLoader}, field by
 * field as the 2.x function fills them: operator name and UID exist only in metadata V5+, so a
 * 1.20 savepoint (metadata V4) has null in both; coordinator state size is 0 without coordinator
 * state; total size is the operator's checkpointed size. Compiles against 1.20 and 2.x: the name
 * and UID getters are looked up by reflection.
 */
public final class MetadataRows {
    private MetadataRows() {}

    public static ArrayNode read(String path) throws Exception {
        CheckpointMetadata m = SavepointLoader.loadSavepointMetadata(path);
        ArrayNode rows = Json.arr();
        for (OperatorState s : m.getOperatorStates()) {
            ObjectNode o = Json.obj();
            o.put("checkpointId", m.getCheckpointId());
            String name = optional(s, "getOperatorName");
            if (name == null) o.putNull("operatorName");
            else o.put("operatorName", name);
            String uid = optional(s, "getOperatorUid");
            if (uid == null || uid.isEmpty()) o.putNull("operatorUid");
            else o.put("operatorUid", uid);
            o.put("operatorUidHash", s.getOperatorID().toHexString());
            o.put("parallelism", s.getParallelism());
            o.put("maxParallelism", s.getMaxParallelism());
            o.put("subtaskStateCount", s.getStates().size());
            o.put("coordinatorStateSizeInBytes", s.getCoordinatorState() == null ? 0L : s.getCoordinatorState().getStateSize());
            o.put("totalSizeInBytes", s.getCheckpointedSize());
            rows.add(o);
        }
        return rows;
    }

    /** OperatorState's Optional<String> getter by name, or null when this Flink has none. */
    private static String optional(OperatorState s, String getter) throws Exception {
        Method g;
        try {
            g = OperatorState.class.getMethod(getter);
        } catch (NoSuchMethodException e) {
            return null;
        }
        Object v = g.invoke(s);
        return v instanceof Optional<?> o ? (String) o.orElse(null) : null;
    }

    /**
     * The hash of the one operator that carries state and has none of the given UIDs: how a 1.20
     * fixture finds its operator without UID, whose name the V4 metadata does not store.
     */
    public static String unnamedHash(String path, List<String> uids) throws Exception {
        List<String> known = new ArrayList<>();
        for (String u : uids) known.add(OperatorIdentifier.forUid(u).getOperatorId().toHexString());
        String found = null;
        for (JsonNode r : read(path)) {
            String h = r.get("operatorUidHash").asText();
            if (known.contains(h) || r.get("totalSizeInBytes").asLong() == 0) continue;
            if (found != null) throw new IllegalStateException("two stateful operators without a known uid: " + found + ", " + h);
            found = h;
        }
        if (found == null) throw new IllegalStateException("no stateful operator without a known uid in " + path);
        return found;
    }
}

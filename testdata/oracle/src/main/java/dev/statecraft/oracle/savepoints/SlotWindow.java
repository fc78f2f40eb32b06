package dev.statecraft.oracle.savepoints;

import java.io.IOException;
import java.util.Base64;
import java.util.Collection;
import java.util.List;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.util.Collector;

import dev.statecraft.oracle.common.Json;

/**
 * A user-defined window whose serializer's snapshot is a {@link SimpleTypeSerializerSnapshot}
 * subclass, as a user writes one for a serializer without configuration: its snapshot payload is
 * empty (version 3), so nothing in the savepoint says how long the snapshot or a window is. The
 * window is the event-time hour {@code slot} (an i64: 8 bytes); over the slot-window job's
 * Integer keys (fixed-length) no length follows key or namespace in the composite keys. Its
 * values are opaque to statecraft; the expectation writes them as {serializer, base64} like
 * NamedWindow's.
 */
public final class SlotWindow extends Window {
    static final long HOUR = 3_600_000L;

    final long slot;

    SlotWindow(long slot) {
        this.slot = slot;
    }

    @Override
    public long maxTimestamp() {
        return (slot + 1) * HOUR - 1;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SlotWindow && ((SlotWindow) o).slot == slot;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(slot);
    }

    @Override
    public String toString() {
        return "SlotWindow{" + slot + "}";
    }

    /** The window as the expectation files show a namespace statecraft cannot decode. */
    static ObjectNode json(SlotWindow w) {
        DataOutputSerializer out = new DataOutputSerializer(8);
        try {
            new Serializer().serialize(w, out);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        ObjectNode o = Json.obj();
        o.put("serializer", Snapshot.class.getName());
        o.put("base64", Base64.getEncoder().encodeToString(out.getCopyOfBuffer()));
        return o;
    }

    /** The slot as an i64. */
    public static final class Serializer extends TypeSerializer<SlotWindow> {
        @Override public boolean isImmutableType() { return true; }
        @Override public TypeSerializer<SlotWindow> duplicate() { return this; }
        @Override public SlotWindow createInstance() { return null; }
        @Override public SlotWindow copy(SlotWindow from) { return from; }
        @Override public SlotWindow copy(SlotWindow from, SlotWindow reuse) { return from; }
        @Override public int getLength() { return 8; }

        @Override
        public void serialize(SlotWindow w, DataOutputView out) throws IOException {
            out.writeLong(w.slot);
        }

        @Override
        public SlotWindow deserialize(DataInputView in) throws IOException {
            return new SlotWindow(in.readLong());
        }

        @Override
        public SlotWindow deserialize(SlotWindow reuse, DataInputView in) throws IOException {
            return deserialize(in);
        }

        @Override
        public void copy(DataInputView in, DataOutputView out) throws IOException {
            out.writeLong(in.readLong());
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Serializer;
        }

        @Override
        public int hashCode() {
            return Serializer.class.hashCode();
        }

        @Override
        public TypeSerializerSnapshot<SlotWindow> snapshotConfiguration() {
            return new Snapshot();
        }
    }

    /** A simple snapshot: class name and version 3, no payload. */
    public static final class Snapshot extends SimpleTypeSerializerSnapshot<SlotWindow> {
        public Snapshot() {
            super(Serializer::new);
        }
    }

    /** Record i (a Long, event time i * 10 min) goes to the slot of its event-time hour. */
    static final class Assigner extends WindowAssigner<Object, SlotWindow> {
        @Override
        public Collection<SlotWindow> assignWindows(Object element, long timestamp, WindowAssignerContext ctx) {
            return List.of(new SlotWindow(Math.floorDiv(timestamp, HOUR)));
        }

        @Override
        public Trigger<Object, SlotWindow> getDefaultTrigger() {
            return new FixtureFunctions.WindowEndTrigger<>(false);
        }

        /** Flink 1.x's abstract form of getDefaultTrigger (no @Override: 2.x has no such method). */
        public Trigger<Object, SlotWindow> getDefaultTrigger(org.apache.flink.streaming.api.environment.StreamExecutionEnvironment env) {
            return new FixtureFunctions.WindowEndTrigger<>(false);
        }

        @Override
        public TypeSerializer<SlotWindow> getWindowSerializer(ExecutionConfig config) {
            return new Serializer();
        }

        @Override
        public boolean isEventTime() {
            return true;
        }
    }

    /** The per-window map state of Fired. */
    static final String FIRED = "fired";

    /** At each firing, puts the window's count so far ("n" + count, a String user key) with its sum
     *  into the per-window map state FIRED, and emits the count. */
    static final class Fired extends ProcessWindowFunction<Tuple2<Long, Long>, Long, Integer, SlotWindow> {
        @Override
        public void process(Integer key, Context ctx, Iterable<Tuple2<Long, Long>> sums, Collector<Long> out) throws Exception {
            MapState<String, Long> fired = ctx.windowState().getMapState(new MapStateDescriptor<>(FIRED, Types.STRING, Types.LONG));
            for (Tuple2<Long, Long> s : sums) {
                fired.put("n" + s.f1, s.f0);
                out.collect(s.f1);
            }
        }
    }
}

package dev.statecraft.oracle.savepoints;

import java.io.IOException;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.Window;

import dev.statecraft.oracle.common.Json;

/**
 * A user-defined window: a name plus the end of the hour it covers. Its serializer writes the
 * name (StringSerializer) then the end (i64), so it is variable-length like the String keys of
 * the named-window job: with both variable-length, Flink's composite keys carry a length after
 * the key and after the namespace (the "ambiguous" layout) in RocksDB and canonical savepoints
 * alike. No built-in window has such a serializer (TimeWindow and GlobalWindow are fixed-length).
 * Its snapshot is a CompositeTypeSerializerSnapshot of a class statecraft does not know, so
 * statecraft shows the window as opaque bytes; the expectation writes it the same way:
 * {"serializer": snapshot class, "base64": the window's bytes from this serializer}.
 */
public final class NamedWindow extends Window {
    static final long HOUR = 3_600_000L;
    /** Window names: lengths 1, 9 and 300 (a length suffix of two bytes in the composite key). */
    static final String[] NAMES = {"a", "window-bb", "n".repeat(300)};

    final String name;
    final long end;

    NamedWindow(String name, long end) {
        this.name = name;
        this.end = end;
    }

    @Override
    public long maxTimestamp() {
        return end - 1;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NamedWindow && ((NamedWindow) o).name.equals(name) && ((NamedWindow) o).end == end;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, end);
    }

    @Override
    public String toString() {
        return "NamedWindow{" + name + ", " + end + "}";
    }

    /** The key of record i: short ones and one of 280 characters (a two-byte key length suffix). */
    static String key(long i) {
        return i % 4 == 3 ? "long-key-" + "k".repeat(271) : "user-" + (i % 4);
    }

    /** The window as the expectation files show a namespace statecraft cannot decode. */
    static ObjectNode json(NamedWindow w) {
        DataOutputSerializer out = new DataOutputSerializer(64);
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

    /** Name, then end. Not a singleton: the composite snapshot rebuilds it from its nested ones. */
    public static final class Serializer extends TypeSerializer<NamedWindow> {
        final TypeSerializer<String> names;
        final TypeSerializer<Long> ends;

        public Serializer() {
            this(StringSerializer.INSTANCE, LongSerializer.INSTANCE);
        }

        Serializer(TypeSerializer<String> names, TypeSerializer<Long> ends) {
            this.names = names;
            this.ends = ends;
        }

        @Override public boolean isImmutableType() { return true; }
        @Override public TypeSerializer<NamedWindow> duplicate() { return this; }
        @Override public NamedWindow createInstance() { return null; }
        @Override public NamedWindow copy(NamedWindow from) { return from; }
        @Override public NamedWindow copy(NamedWindow from, NamedWindow reuse) { return from; }
        @Override public int getLength() { return -1; }

        @Override
        public void serialize(NamedWindow w, DataOutputView out) throws IOException {
            names.serialize(w.name, out);
            ends.serialize(w.end, out);
        }

        @Override
        public NamedWindow deserialize(DataInputView in) throws IOException {
            String n = names.deserialize(in);
            return new NamedWindow(n, ends.deserialize(in));
        }

        @Override
        public NamedWindow deserialize(NamedWindow reuse, DataInputView in) throws IOException {
            return deserialize(in);
        }

        @Override
        public void copy(DataInputView in, DataOutputView out) throws IOException {
            names.copy(in, out);
            ends.copy(in, out);
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
        public TypeSerializerSnapshot<NamedWindow> snapshotConfiguration() {
            return new Snapshot(this);
        }
    }

    /** A composite snapshot (nested: the name's and the end's serializers) with no outer data. */
    public static final class Snapshot extends CompositeTypeSerializerSnapshot<NamedWindow, Serializer> {
        public Snapshot() {}

        Snapshot(Serializer s) {
            super(s);
        }

        @Override
        protected int getCurrentOuterSnapshotVersion() {
            return 1;
        }

        @Override
        protected TypeSerializer<?>[] getNestedSerializers(Serializer outer) {
            return new TypeSerializer<?>[] {outer.names, outer.ends};
        }

        @Override
        @SuppressWarnings("unchecked")
        protected Serializer createOuterSerializerWithNestedSerializers(TypeSerializer<?>[] nested) {
            return new Serializer((TypeSerializer<String>) nested[0], (TypeSerializer<Long>) nested[1]);
        }
    }

    /** Record i (a Long) goes to the window NAMES[i % 3] ending i % 3 ms after the end of its
     *  event-time hour: windows of one key never share a last millisecond, which is how the State
     *  Processor API's reading gives each timer its window (StateDump.windowTimers). */
    static final class Assigner extends WindowAssigner<Object, NamedWindow> {
        @Override
        public Collection<NamedWindow> assignWindows(Object element, long timestamp, WindowAssignerContext ctx) {
            long i = (Long) element;
            int n = (int) (i % NAMES.length);
            return List.of(new NamedWindow(NAMES[n], (Math.floorDiv(timestamp, HOUR) + 1) * HOUR + n));
        }

        @Override
        public Trigger<Object, NamedWindow> getDefaultTrigger() {
            return new FixtureFunctions.WindowEndTrigger<>(false);
        }

        /** Flink 1.x's abstract form of getDefaultTrigger (no @Override: 2.x has no such method). */
        public Trigger<Object, NamedWindow> getDefaultTrigger(org.apache.flink.streaming.api.environment.StreamExecutionEnvironment env) {
            return new FixtureFunctions.WindowEndTrigger<>(false);
        }

        @Override
        public TypeSerializer<NamedWindow> getWindowSerializer(ExecutionConfig config) {
            return new Serializer();
        }

        @Override
        public boolean isEventTime() {
            return true;
        }
    }
}

package dev.statecraft.oracle.metadata;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.checkpoint.CheckpointProperties;
import org.apache.flink.runtime.checkpoint.CheckpointRetentionPolicy;
import org.apache.flink.runtime.checkpoint.FinishedOperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.FullyFinishedOperatorState;
import org.apache.flink.runtime.checkpoint.MasterState;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.StateObjectCollection;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.checkpoint.channel.ResultSubpartitionInfo;
import org.apache.flink.runtime.checkpoint.filemerging.LogicalFile;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.checkpoint.metadata.MetadataSerializer;
import org.apache.flink.runtime.checkpoint.metadata.MetadataV6Serializer;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.InputChannelStateHandle;
import org.apache.flink.runtime.state.InputStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeOffsets;
import org.apache.flink.runtime.state.KeyGroupsSavepointStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.MergedInputChannelStateHandle;
import org.apache.flink.runtime.state.MergedResultSubpartitionStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.OperatorStreamStateHandle;
import org.apache.flink.runtime.state.OutputStateHandle;
import org.apache.flink.runtime.state.ResultSubpartitionStateHandle;
import org.apache.flink.runtime.state.StateHandleID;
import org.apache.flink.runtime.state.changelog.ChangelogStateBackendHandle.ChangelogStateBackendHandleImpl;
import org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl;
import org.apache.flink.runtime.state.changelog.SequenceNumber;
import org.apache.flink.runtime.state.changelog.StateChange;
import org.apache.flink.runtime.state.changelog.inmemory.InMemoryChangelogStateHandle;
import org.apache.flink.runtime.state.filemerging.DirectoryStreamStateHandle;
import org.apache.flink.runtime.state.filemerging.EmptyFileMergingOperatorStreamStateHandle;
import org.apache.flink.runtime.state.filemerging.EmptySegmentFileStateHandle;
import org.apache.flink.runtime.state.filemerging.FileMergingOperatorStreamStateHandle;
import org.apache.flink.runtime.state.filemerging.SegmentFileStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.RelativeFileStateHandle;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

/**
 * Oracle command {@code metadata-handles OUTDIR}: one checkpoint metadata holding every state
 * handle Flink 2.3.0 can write, stored through Flink's own serializers.
 *
 * <p>Savepoints made by jobs only ever hold a few handle kinds (inline bytes, relative files,
 * savepoint key-group handles, operator stream handles). Checkpoints hold the rest: incremental
 * RocksDB handles, changelog handles, file-merging segments, unaligned-checkpoint channel state.
 * Those objects are built here with Flink's public constructors and written with
 * {@code Checkpoints.storeCheckpointMetadata}; the bytes are Flink's, only the values are made up.
 * Handle tags written (MetadataV2V3SerializerBase): 1 inline, 2 file, 4 operator stream,
 * 6 relative file, 7 savepoint key groups, 9 in-memory changelog, 11 incremental, 12 key groups,
 * 13 changelog file, 14 changelog backend, 15 segment, 16 empty segment, 17 file-merging operator
 * stream (plain and empty); plus input-channel and result-subpartition handles, and finished
 * subtasks, a fully finished operator, an empty subtask, a coordinator and a master state.
 *
 * <pre>
 *   OUTDIR/v3/_metadata .. OUTDIR/v6/_metadata   the metadata through MetadataV3..V6Serializer
 *   OUTDIR/merged-v6/_metadata                   channel handles merged per subtask (version 6
 *                                                only: older serializers cannot write them)
 *   OUTDIR/sizes.tsv   variant TAB operatorId TAB getStates().size() TAB getCheckpointedSize()
 *                      TAB getStateSize()   (per file and operator, of what Flink loads back)
 * </pre>
 *
 * Each file is what Flink writes after loading the built metadata back once (operator state
 * names come back in HashMap order); loading and storing it again must not change a byte.
 */
public final class MetadataHandles {
    private MetadataHandles() {}

    public static int run(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: metadata-handles OUTDIR");
            return 2;
        }
        Path outDir = Path.of(args[0]);
        Map<String, MetadataSerializer> variants = new LinkedHashMap<>();
        for (MetadataSerializer s : MetadataFiles.WRITABLE) {
            variants.put("v" + s.getVersion(), s);
        }
        variants.put("merged-v6", MetadataV6Serializer.INSTANCE);

        List<String> sizes = new ArrayList<>();
        for (Map.Entry<String, MetadataSerializer> v : variants.entrySet()) {
            String variant = v.getKey();
            CheckpointMetadata metadata = build(variant.startsWith("merged-"));
            // Stored, loaded and stored again: Flink reads the operator state names into a
            // HashMap, so the file keeps the order Flink itself would write on any rewrite.
            Path file = MetadataFiles.store(metadata, v.getValue(), outDir.resolve(variant));
            file = MetadataFiles.store(MetadataFiles.load(file.getParent()), v.getValue(), outDir.resolve(variant));
            CheckpointMetadata back = MetadataFiles.load(file.getParent());
            long diff = MetadataFiles.firstDifference(MetadataFiles.bytes(back, v.getValue()), Files.readAllBytes(file));
            if (diff >= 0) {
                System.err.println("metadata-handles: " + file + ": storing what Flink loaded back gives different bytes from offset " + diff);
                return 1;
            }
            if (back.getOperatorStates().size() != metadata.getOperatorStates().size()) {
                System.err.println("metadata-handles: " + file + ": operators lost on loading back");
                return 1;
            }
            for (OperatorState op : back.getOperatorStates()) {
                sizes.add(variant + "\t" + op.getOperatorID().toHexString() + "\t" + op.getStates().size()
                        + "\t" + op.getCheckpointedSize() + "\t" + op.getStateSize());
            }
            System.out.println(file + "\tversion " + MetadataFiles.versionOf(file) + "\t" + Files.size(file) + " bytes");
        }
        Path tsv = outDir.resolve("sizes.tsv");
        Files.write(tsv, sizes, StandardCharsets.UTF_8);
        System.out.println(tsv + "\t" + sizes.size() + " rows");
        return 0;
    }

    /** The metadata; merged puts the channel handles into one merged handle per direction. */
    static CheckpointMetadata build(boolean merged) {
        ByteStreamStateHandle inline = new ByteStreamStateHandle("inline-handle", new byte[] {1, 2, 3, 4, 5});
        FileStateHandle file = new FileStateHandle(new org.apache.flink.core.fs.Path("file:/checkpoints/job/chk-42/3f0e9a"), 1234);
        RelativeFileStateHandle relative = new RelativeFileStateHandle(
                new org.apache.flink.core.fs.Path("file:/savepoints/savepoint-42/ab12cd"), "ab12cd", 77);
        SegmentFileStateHandle segment = new SegmentFileStateHandle(
                new org.apache.flink.core.fs.Path("file:/checkpoints/job/shared/segment-1"), 10, 20,
                CheckpointedStateScope.SHARED, new LogicalFile.LogicalFileId("logical-file-1"));
        DirectoryStreamStateHandle taskOwned = DirectoryStreamStateHandle.of(new org.apache.flink.core.fs.Path("file:/checkpoints/job/taskowned"));
        DirectoryStreamStateHandle shared = DirectoryStreamStateHandle.of(new org.apache.flink.core.fs.Path("file:/checkpoints/job/shared"));

        // Keyed handles over key groups 0..3 with an offset per key group.
        KeyGroupRange small = KeyGroupRange.of(0, 3);
        KeyGroupRange half = KeyGroupRange.of(0, 63);
        KeyGroupRangeOffsets offsets = new KeyGroupRangeOffsets(small, new long[] {0, 5, 9, 12});
        KeyGroupsStateHandle keyGroups = KeyGroupsStateHandle.restore(offsets, file, new StateHandleID("handle-key-groups"));
        KeyGroupsSavepointStateHandle savepointKeyGroups = new KeyGroupsSavepointStateHandle(offsets, relative);
        IncrementalRemoteKeyedStateHandle incremental = IncrementalRemoteKeyedStateHandle.restore(
                UUID.fromString("2f4c6e1a-5b7d-4e9f-8a0b-1c2d3e4f5a6b"), half, 7,
                List.of(HandleAndLocalPath.of(file, "000012.sst"), HandleAndLocalPath.of(segment, "000013.sst")),
                List.of(HandleAndLocalPath.of(inline, "MANIFEST-000004"),
                        HandleAndLocalPath.of(EmptySegmentFileStateHandle.INSTANCE, "OPTIONS-000007")),
                inline, 4096, new StateHandleID("handle-incremental"));
        InMemoryChangelogStateHandle changelogBytes = InMemoryChangelogStateHandle.restore(
                List.of(StateChange.ofMetadataChange("meta".getBytes(StandardCharsets.UTF_8)),
                        StateChange.ofDataChange(2, new byte[] {9, 8, 7})),
                SequenceNumber.of(1), SequenceNumber.of(9), half, new StateHandleID("handle-changelog-bytes"));
        ChangelogStateHandleStreamImpl changelogFiles = ChangelogStateHandleStreamImpl.restore(
                List.of(Tuple2.of(file, 0L), Tuple2.of(inline, 5L)), half, 30, 12, "filesystem",
                new StateHandleID("handle-changelog-files"));
        ChangelogStateBackendHandleImpl changelog = ChangelogStateBackendHandleImpl.restore(
                List.of(incremental, keyGroups), List.of(changelogBytes, changelogFiles), half, 8, 5, 77,
                new StateHandleID("handle-changelog"));

        // Operator state: one name per distribution mode (one with no offsets at all).
        Map<String, OperatorStateHandle.StateMetaInfo> states = new LinkedHashMap<>();
        states.put("buffer", new OperatorStateHandle.StateMetaInfo(new long[] {0, 8}, OperatorStateHandle.Mode.SPLIT_DISTRIBUTE));
        states.put("rules", new OperatorStateHandle.StateMetaInfo(new long[] {16}, OperatorStateHandle.Mode.BROADCAST));
        states.put("ünion", new OperatorStateHandle.StateMetaInfo(new long[] {}, OperatorStateHandle.Mode.UNION));
        OperatorStreamStateHandle operatorStream = new OperatorStreamStateHandle(states, inline);
        FileMergingOperatorStreamStateHandle fileMerging = new FileMergingOperatorStreamStateHandle(taskOwned, shared,
                Map.of("offsets", new OperatorStateHandle.StateMetaInfo(new long[] {0, 4}, OperatorStateHandle.Mode.SPLIT_DISTRIBUTE)),
                segment);
        EmptyFileMergingOperatorStreamStateHandle emptyFileMerging = EmptyFileMergingOperatorStreamStateHandle.create(taskOwned, shared);

        // Unaligned-checkpoint channel state of subtask 1.
        List<InputChannelStateHandle> inputs = List.of(
                new InputChannelStateHandle(1, new InputChannelInfo(0, 3), file, List.of(0L, 4L), 8),
                new InputChannelStateHandle(1, new InputChannelInfo(1, 0), file, List.of(100L), 16));
        List<ResultSubpartitionStateHandle> outputs = List.of(
                new ResultSubpartitionStateHandle(1, new ResultSubpartitionInfo(2, 1), inline, List.of(0L), 3),
                new ResultSubpartitionStateHandle(1, new ResultSubpartitionInfo(2, 2), inline, List.of(3L), 2));
        StateObjectCollection<InputStateHandle> inputState;
        StateObjectCollection<OutputStateHandle> outputState;
        if (merged) {
            inputState = StateObjectCollection.singleton(MergedInputChannelStateHandle.fromChannelHandles(inputs));
            outputState = StateObjectCollection.singleton(MergedResultSubpartitionStateHandle.fromChannelHandles(outputs));
        } else {
            inputState = new StateObjectCollection<>(new ArrayList<>(inputs));
            outputState = new StateObjectCollection<>(new ArrayList<>(outputs));
        }

        // The id Flink derives from the uid, as a job would have it.
        OperatorState keyed = new OperatorState("Keyed Process -> Sink: out 😀", "my-uid",
                OperatorIdentifier.forUid("my-uid").getOperatorId(), 4, 128);
        keyed.setCoordinatorState(new ByteStreamStateHandle("coordinator", "coordinator-state".getBytes(StandardCharsets.UTF_8)));
        keyed.putState(0, OperatorSubtaskState.builder()
                .setManagedOperatorState(operatorStream)
                .setRawOperatorState(fileMerging)
                .setManagedKeyedState(savepointKeyGroups)
                .setRawKeyedState(keyGroups)
                .build());
        keyed.putState(1, OperatorSubtaskState.builder()
                .setManagedKeyedState(incremental)
                .setRawKeyedState(changelog)
                .setInputChannelState(inputState)
                .setResultSubpartitionState(outputState)
                .build());
        keyed.putState(2, OperatorSubtaskState.builder().setManagedOperatorState(emptyFileMerging).build());
        keyed.putState(3, FinishedOperatorSubtaskState.INSTANCE);

        OperatorState finished = new FullyFinishedOperatorState(null, null, id(9), 2, 128);
        OperatorState source = new OperatorState("Source: gen", null, id(8), 2, 32768);
        source.putState(0, OperatorSubtaskState.builder().build()); // subtask 1 reported nothing

        return new CheckpointMetadata(42, List.of(keyed, finished, source),
                List.of(new MasterState("hook", "payload".getBytes(StandardCharsets.UTF_8), 1)),
                CheckpointProperties.forCheckpoint(CheckpointRetentionPolicy.RETAIN_ON_CANCELLATION));
    }

    /** An operator id whose first byte is b and the rest zero, easy to spot in a hex dump. */
    private static OperatorID id(int b) {
        byte[] bytes = new byte[16];
        bytes[0] = (byte) b;
        return new OperatorID(bytes);
    }
}

package dev.statecraft.oracle.metadata;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.checkpoint.metadata.MetadataSerializer;
import org.apache.flink.runtime.checkpoint.metadata.MetadataV3Serializer;
import org.apache.flink.runtime.checkpoint.metadata.MetadataV4Serializer;
import org.apache.flink.runtime.checkpoint.metadata.MetadataV5Serializer;
import org.apache.flink.runtime.checkpoint.metadata.MetadataV6Serializer;

/**
 * Reading and writing {@code _metadata} files only through Flink's own entry points
 * ({@code Checkpoints.loadCheckpointMetadata} / {@code storeCheckpointMetadata}), so the bytes are
 * exactly what Flink writes: magic number, version, then the chosen serializer's body.
 */
final class MetadataFiles {
    private MetadataFiles() {}

    /**
     * The serializers Flink 2.3.0 can still write. Version 3 came with Flink 1.11, 4 with 1.16
     * (checkpoint properties), 5 with 1.17 (operator name and uid), 6 with 1.20 (merged channel
     * state handles); versions 1 and 2 are read-only in 2.3.0.
     */
    static final List<MetadataSerializer> WRITABLE = List.of(
            MetadataV3Serializer.INSTANCE,
            MetadataV4Serializer.INSTANCE,
            MetadataV5Serializer.INSTANCE,
            MetadataV6Serializer.INSTANCE);

    /** Loads {@code dir/_metadata}; dir is also the pointer relative file handles resolve against. */
    static CheckpointMetadata load(Path dir) throws IOException {
        try (InputStream raw = Files.newInputStream(dir.resolve("_metadata"));
                DataInputStream in = new DataInputStream(raw)) {
            return Checkpoints.loadCheckpointMetadata(
                    in, MetadataFiles.class.getClassLoader(), dir.toAbsolutePath().toUri().toString());
        }
    }

    /**
     * Stores metadata with serializer into {@code dir/_metadata} (dir is created), through a
     * temporary file renamed into place so an interrupted run leaves no half file behind.
     */
    static Path store(CheckpointMetadata metadata, MetadataSerializer serializer, Path dir) throws IOException {
        Files.createDirectories(dir);
        Path tmp = dir.resolve("_metadata.tmp");
        try (OutputStream raw = new BufferedOutputStream(Files.newOutputStream(tmp));
                DataOutputStream out = new DataOutputStream(raw)) {
            Checkpoints.storeCheckpointMetadata(metadata, out, serializer);
        }
        Path file = dir.resolve("_metadata");
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        return file;
    }

    /** What {@link #store} would write, in memory. */
    static byte[] bytes(CheckpointMetadata metadata, MetadataSerializer serializer) throws IOException {
        java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(buf)) {
            Checkpoints.storeCheckpointMetadata(metadata, out, serializer);
        }
        return buf.toByteArray();
    }

    /** The offset of the first byte where a and b differ, or -1 when they are equal. */
    static long firstDifference(byte[] a, byte[] b) {
        return Arrays.mismatch(a, b);
    }

    /** The version number Flink wrote after the magic number (bytes 4..7, big-endian). */
    static int versionOf(Path file) throws IOException {
        try (DataInputStream in = new DataInputStream(Files.newInputStream(file))) {
            in.readInt(); // magic number, checked by loadCheckpointMetadata
            return in.readInt();
        }
    }
}

package dev.statecraft.oracle.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;

import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.util.CloseableIterator;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.avro.AvroParquetWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.LocalOutputFile;

/**
 * {@code bench-spa-parquet SAVEPOINT OUTDIR [BACKEND]}: the peer of {@code statecraft savepoint
 * dump --operator uid:bench-keyed --format parquet -o DIR/} in the benchmarks (bench/inside.sh).
 * A State Processor API job reads both keyed states of a {@code bench-savepoint} savepoint with
 * the rescale peer's reader (SpaRescale.ReadAll: one record per key), and the client writes them
 * with parquet-avro, one file per state as statecraft does: OUTDIR/count.parquet (keyGroup, key, value) and OUTDIR/attrs.parquet (keyGroup, key, userKey,
 * value), uncompressed (bench/inside.sh compares it with statecraft's --compression none export), in parquet-avro's default row groups. Records
 * are collected to the client as SpaDump collects them. Prints the row counts to stderr.
 *
 * Built only with ORACLE_PROFILE=bench-parquet (run.sh): its Parquet and Hadoop client jars stay
 * off the classpath of every other oracle command.
 */
public final class SpaParquet {
    private SpaParquet() {}

    public static int run(String[] args) throws Exception {
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: bench-spa-parquet SAVEPOINT OUTDIR [BACKEND=hashmap]");
            return 2;
        }
        Path out = Paths.get(args[1]).toAbsolutePath();
        Files.createDirectories(out);
        Schema value = SchemaBuilder.record("count").fields()
                .requiredInt("keyGroup").optionalInt("key").optionalLong("value").endRecord();
        Schema map = SchemaBuilder.record("attrs").fields()
                .requiredInt("keyGroup").optionalInt("key").optionalInt("userKey").optionalLong("value").endRecord();
        SavepointReader reader = SavepointReader.read(SpaDump.env(), args[0], SpaDump.backend(args.length > 2 ? args[2] : "hashmap"));
        long nv = 0, nm = 0;
        try (ParquetWriter<GenericRecord> wv = writer(out.resolve("count.parquet"), value);
             ParquetWriter<GenericRecord> wm = writer(out.resolve("attrs.parquet"), map);
             CloseableIterator<Tuple3<Integer, Long, Map<Integer, Long>>> it = reader
                     .readKeyedState(OperatorIdentifier.forUid(BenchSavepoint.UID), new SpaRescale.ReadAll(), Types.INT, SpaRescale.RECORD)
                     .executeAndCollect("statecraft-bench-spa-parquet")) {
            while (it.hasNext()) {
                Tuple3<Integer, Long, Map<Integer, Long>> r = it.next();
                int kg = KeyGroupRangeAssignment.assignToKeyGroup(r.f0, BenchSavepoint.MAX_PARALLELISM);
                if (r.f1 != null) {
                    GenericRecord g = new GenericData.Record(value);
                    g.put("keyGroup", kg);
                    g.put("key", r.f0);
                    g.put("value", r.f1);
                    wv.write(g);
                    nv++;
                }
                for (Map.Entry<Integer, Long> e : r.f2.entrySet()) {
                    GenericRecord g = new GenericData.Record(map);
                    g.put("keyGroup", kg);
                    g.put("key", r.f0);
                    g.put("userKey", e.getKey());
                    g.put("value", e.getValue());
                    wm.write(g);
                    nm++;
                }
            }
        }
        System.err.println("bench-spa-parquet: " + nv + " rows of " + BenchSavepoint.VALUE_STATE + ", " + nm + " of " + BenchSavepoint.MAP_STATE);
        return 0;
    }

    static ParquetWriter<GenericRecord> writer(Path file, Schema schema) throws java.io.IOException {
        Files.deleteIfExists(file);
        return AvroParquetWriter.<GenericRecord>builder(new LocalOutputFile(file))
                .withSchema(schema)
                .withConf(new Configuration())
                .withCompressionCodec(CompressionCodecName.UNCOMPRESSED)
                .build();
    }
}

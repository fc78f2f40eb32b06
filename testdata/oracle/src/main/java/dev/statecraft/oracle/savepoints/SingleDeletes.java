package dev.statecraft.oracle.savepoints;

import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code rocksdb-single-delete OUTDIR}: a RocksDB database with SingleDelete records, written
 * through the RocksDB Java API that Flink's RocksDB backend bundles (frocksdbjni), since Flink
 * itself never writes a SingleDelete. OUTDIR/single-delete-NAME/ holds the database's CURRENT,
 * MANIFEST and SST files (NAME: the RocksDB version); OUTDIR/single-delete-NAME.expect.json
 * holds, per column family, every key and value RocksDB's own iterator returns (hex), and the
 * version.
 *
 * <p>Each batch of writes is flushed into its own L0 table (auto compaction off), so a
 * SingleDelete sits in a newer table than the Put it deletes, or, where a snapshot held during
 * the flush keeps both, in the same table:
 *
 * <pre>
 *   table 1: Put a b c d e g (and x y in "default")
 *   table 2: SingleDelete a, SingleDelete c then Put c, SingleDelete z (never written),
 *            Put f, SingleDelete f and Put h, SingleDelete h under a snapshot (both kept);
 *            SingleDelete x ("default")
 *   table 3: Put a again (over its SingleDelete), Put h again (over the pair), SingleDelete d,
 *            SingleDelete g then Put g
 * </pre>
 */
public final class SingleDeletes {
    private SingleDeletes() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: rocksdb-single-delete OUTDIR");
            return 2;
        }
        RocksDB.loadLibrary();
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        String name = "single-delete-" + RocksDB.rocksdbVersion().toString();
        Path tmp = Files.createTempDirectory(out, ".tmp-" + name);
        try {
            ObjectNode expect = write(tmp.resolve("db"));
            Path dst = out.resolve(name);
            SavepointDirs.deleteTree(dst);
            Files.createDirectories(dst);
            // Only what a reader of the live database needs: CURRENT, the MANIFEST it names and
            // the tables (no WAL: every write was flushed; no LOG, OPTIONS, LOCK or IDENTITY).
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(tmp.resolve("db"))) {
                for (Path p : ds) {
                    String f = p.getFileName().toString();
                    if (f.equals("CURRENT") || f.startsWith("MANIFEST-") || f.endsWith(".sst")) {
                        Files.copy(p, dst.resolve(f), StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            }
            Files.writeString(out.resolve(name + ".expect.json"), Json.pretty(expect));
            System.out.println(name + ": " + expect.get("columnFamilies"));
        } finally {
            SavepointDirs.deleteTree(tmp);
        }
        return 0;
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static ObjectNode write(Path dir) throws Exception {
        List<ColumnFamilyDescriptor> cfs = List.of(
                new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, new ColumnFamilyOptions().setDisableAutoCompactions(true)),
                new ColumnFamilyDescriptor(b("state-a"), new ColumnFamilyOptions().setDisableAutoCompactions(true)));
        List<ColumnFamilyHandle> hs = new ArrayList<>();
        ObjectNode expect = Json.obj();
        expect.put("rocksdbVersion", RocksDB.rocksdbVersion().toString());
        try (DBOptions opts = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
             RocksDB db = RocksDB.open(opts, dir.toString(), cfs, hs);
             FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
            ColumnFamilyHandle def = hs.get(0), a = hs.get(1);
            // table 1
            for (String k : new String[] {"a", "b", "c", "d", "e", "g"}) db.put(a, b(k), b(k + "=1"));
            db.put(def, b("x"), b("x=1"));
            db.put(def, b("y"), b("y=1"));
            db.flush(flush, hs);
            // table 2
            db.singleDelete(a, b("a"));
            db.singleDelete(a, b("c"));
            db.put(a, b("c"), b("c=2"));
            db.singleDelete(a, b("z"));
            db.put(a, b("f"), b("f=2"));
            db.put(a, b("h"), b("h=2"));
            Snapshot s = db.getSnapshot(); // keeps f's and h's Puts beside their SingleDeletes
            db.singleDelete(a, b("f"));
            db.singleDelete(a, b("h"));
            db.singleDelete(def, b("x"));
            db.flush(flush, hs);
            db.releaseSnapshot(s);
            // table 3
            db.put(a, b("a"), b("a=3"));
            db.put(a, b("h"), b("h=3"));
            db.singleDelete(a, b("d"));
            db.singleDelete(a, b("g"));
            db.put(a, b("g"), b("g=3"));
            db.flush(flush, hs);

            ObjectNode live = expect.putObject("columnFamilies");
            for (ColumnFamilyHandle h : hs) {
                ArrayNode kvs = live.putArray(new String(h.getName(), StandardCharsets.UTF_8));
                try (ReadOptions ro = new ReadOptions(); RocksIterator it = db.newIterator(h, ro)) {
                    for (it.seekToFirst(); it.isValid(); it.next()) {
                        kvs.addArray().add(HexFormat.of().formatHex(it.key())).add(HexFormat.of().formatHex(it.value()));
                    }
                    it.status();
                }
            }
            for (ColumnFamilyHandle h : hs) h.close();
        }
        return expect;
    }
}

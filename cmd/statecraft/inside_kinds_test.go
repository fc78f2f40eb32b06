package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/s3test"
	"github.com/statecraft/statecraft/migrate"
	"github.com/statecraft/statecraft/storage"
)

// TestInsideOnSnapshotKinds (#16): stats and diff on every kind of retained checkpoint the oracle
// made (hashmap full, RocksDB full, incremental RocksDB with file merging, native deletes; Flink
// 2.3.0 and 1.20.0): stats counts the entries, keys, timers and elements the State Processor API
// read of the checkpoint, and diff finds the checkpoint equal to its `migrate convert` output (a
// canonical savepoint: other files, other layout, the same entries). The Parquet export of a
// checkpoint is in TestDumpParquetReadByPyarrow, diff against Flink's readings of two
// checkpoints in TestDiffAgreesWithFlinkReadings.
func TestInsideOnSnapshotKinds(t *testing.T) {
	for _, kind := range snapshotKinds {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join("..", "..", "testdata", filepath.FromSlash(kind))
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("fixture: %v", err)
			}
			statsMatchReading(t, dir, readDumpExpectation(t, dir+".expect.json"))
			out := filepath.Join(t.TempDir(), "out")
			if _, err := migrate.Run(dir, out, []migrate.Step{&migrate.Convert{}}, migrate.Options{}); err != nil {
				t.Fatalf("convert: %v", err)
			}
			code, d := diffOut(t, dir, out)
			if got := changes(d); code != 0 || !d.Equal || len(got) != 0 {
				t.Errorf("diff with its converted copy: exit %d, equal %v, changes %v; want 0, true, none", code, d.Equal, got)
			}
			entries := int64(0)
			for _, o := range d.Operators {
				for _, s := range o.States {
					entries += s.EntriesA
				}
			}
			if entries == 0 {
				t.Error("the diff compared no entries")
			}
		})
	}
}

// TestInsideOnS3 (#16): stats, diff and the Parquet export of savepoints on the S3 server
// (S3Proxy on loopback) print and write what they do for the local copies, the location aside:
// a canonical and a native RocksDB savepoint, and a diff whose both sides are on the store.
func TestInsideOnS3(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "cli-inside")
	hm, _ := filepath.Abs(migrateFixture(t, "keyed-hashmap"))
	dropped := migrated(t, hm, `  - drop-state: {operator: "uid:int-keyed", state: ratio}`)
	native, _ := filepath.Abs(migrateFixture(t, "native-churn-b"))
	urls := map[string]string{}
	for name, dir := range map[string]string{"hm": hm, "dropped": dropped, "native": native} {
		urls[name] = "s3://" + bucket + "/" + name
		size := uploadDir(t, dir, urls[name])
		if name != "dropped" {
			sameOnStore(t, storage.S3, dir, urls[name], size, "savepoint", "stats", "SP", "--json", "--top", "3")
		}
	}

	// diff: both sides on the store, and one on each side.
	for _, c := range []struct{ a, b, localA, localB string }{
		{urls["hm"], urls["dropped"], hm, dropped},
		{urls["hm"], dropped, hm, dropped},
	} {
		code, out, errs := runCLI("savepoint", "diff", c.a, c.b)
		lcode, lout, lerrs := runCLI("savepoint", "diff", c.localA, c.localB)
		out = strings.NewReplacer(c.a, c.localA, c.b, c.localB).Replace(out)
		if code != 2 || lcode != 2 || out != lout || errs != lerrs || !strings.Contains(out, "state ratio: value -> (absent)") {
			t.Errorf("diff %s %s: exit %d (local %d)\n%s\nlocal:\n%s\nstderr: %s\nlocal stderr: %s", c.a, c.b, code, lcode, out, lout, errs, lerrs)
		}
	}

	// Parquet: the files exported from the store are byte for byte those of the local export.
	for _, c := range []struct{ url, dir, op string }{{urls["hm"], hm, "uid:int-keyed"}, {urls["native"], native, "uid:churn"}} {
		var outs [2]string
		for i, src := range []string{c.url, c.dir} {
			outs[i] = t.TempDir() + "/"
			if code, _, errs := runCLI("savepoint", "dump", src, "--operator", c.op, "--format", "parquet", "-o", outs[i]); code != 0 {
				t.Fatalf("dump %s --format parquet: exit %d: %s", src, code, errs)
			}
		}
		files, _ := filepath.Glob(filepath.Join(outs[1], "*.parquet"))
		if len(files) < 3 {
			t.Fatalf("%s: %d Parquet files from the local copy", c.dir, len(files))
		}
		for _, f := range files {
			local, _ := os.ReadFile(f)
			remote, err := os.ReadFile(filepath.Join(outs[0], filepath.Base(f)))
			if err != nil || !bytes.Equal(local, remote) {
				t.Errorf("%s: %s from the store differs from the local export (%v)", c.url, filepath.Base(f), err)
			}
		}
	}
}

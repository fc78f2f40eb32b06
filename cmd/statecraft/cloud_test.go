package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/azuretest"
	"github.com/statecraft/statecraft/internal/gcstest"
	"github.com/statecraft/statecraft/storage"
)

// cloudStores starts (or reuses) the GCS and Azure emulators, makes bucket name on both and
// returns the URL roots gs://name and azblob://name.
func cloudStores(t *testing.T, name string) map[storage.Kind]string {
	t.Helper()
	gcstest.Require(t).Bucket(t, name)
	azuretest.Require(t).Container(t, name)
	return map[storage.Kind]string{storage.GCS: "gs://" + name, storage.AzBlob: "azblob://" + name}
}

// TestSavepointCommandsOnCloud: inspect, dump and check print the same for a savepoint on GCS
// and on Azure Blob (the emulators) as for its local copy, the location aside, and inspect reads
// fewer bytes than the savepoint holds; a missing _metadata and a missing state file each give
// one error naming the object.
func TestSavepointCommandsOnCloud(t *testing.T) {
	for kind, root := range cloudStores(t, "cli-savepoints") {
		for _, name := range []string{"keyed-hashmap", "keyed-par3"} {
			dir := "../../testdata/savepoints/" + name
			url := root + "/sp/" + name
			size := uploadDir(t, dir, url)
			sameOnStore(t, kind, dir, url, size, "savepoint", "inspect", "SP", "--json")
			sameOnStore(t, kind, dir, url, size, "savepoint", "dump", "SP", "--operator", "uid:int-keyed")
			if plan := dir + ".plan.json"; fileExists(plan) {
				sameOnStore(t, kind, dir, url, size, "savepoint", "check", "SP", "--plan", plan)
			}
		}
		refusesBroken(t, root, map[storage.Kind]string{storage.GCS: "objects.get ", storage.AzBlob: "Get Blob Properties "}[kind])
	}
}

// TestMigrateCloud: migrations gs -> gs, azblob -> azblob (UID renames: server-side copies,
// verified by the content MD5 without reading them back), local -> gs and azblob -> local
// (rescales) give the savepoint a local run gives (inspect and dump equal), leave no helper
// object, and a non-empty DST or a missing bucket is refused with nothing written.
func TestMigrateCloud(t *testing.T) {
	roots := cloudStores(t, "cli-migrate")
	src, _ := filepath.Abs("../../testdata/savepoints/keyed-par3")
	for _, root := range roots {
		uploadDir(t, src, root+"/src")
	}
	rescale := []string{"migrate", "rescale", "SRC", "DST", "--max-parallelism", "256"}
	uid := []string{"migrate", "uid", "SRC", "DST", "--rename", "uid:int-keyed=uid:v2"}
	wants := map[string]string{}
	for i, args := range [][]string{rescale, uid} {
		want := filepath.Join(t.TempDir(), "want")
		a := strings.Fields(strings.NewReplacer("SRC", src, "DST", want).Replace(strings.Join(args, " ")))
		if code, out, errs := runCLI(a...); code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", a, code, out, errs)
		}
		wants[[]string{"rescale", "uid"}[i]] = want
	}
	for _, c := range []struct {
		name, src, dst string
		args           []string
		op             string
	}{
		{"uid gs-gs", roots[storage.GCS] + "/src", roots[storage.GCS] + "/out-uid", uid, "uid:v2"},
		{"uid azblob-azblob", roots[storage.AzBlob] + "/src", roots[storage.AzBlob] + "/out-uid", uid, "uid:v2"},
		{"rescale local-gs", src, roots[storage.GCS] + "/out-rescale", rescale, "uid:int-keyed"},
		{"rescale azblob-local", roots[storage.AzBlob] + "/src", filepath.Join(t.TempDir(), "out"), rescale, "uid:int-keyed"},
	} {
		report := filepath.Join(t.TempDir(), "report.json")
		args := strings.Fields(strings.NewReplacer("SRC", c.src, "DST", c.dst).Replace(strings.Join(c.args, " ")))
		args = append(args, "--report", report)
		code, out, errs := runCLI(args...)
		if code != exitOK {
			t.Fatalf("%s: %v: exit %d\n%s%s", c.name, args, code, out, errs)
		}
		if strings.HasPrefix(c.name, "uid") {
			rep, _ := os.ReadFile(report)
			if !strings.Contains(out, "3 copied server-side") || !strings.Contains(string(rep), "same size and ETag (server-side copy)") || strings.Contains(string(rep), "SHA-256") {
				t.Errorf("%s: not verified as server-side copies; output:\n%s\nreport:\n%s", c.name, out, rep)
			}
		}
		want := wants[c.args[1]]
		for _, show := range [][]string{{"savepoint", "inspect"}, {"savepoint", "dump", "--operator", c.op}} {
			_, a, _ := runCLI(append(show, c.dst)...)
			_, b, _ := runCLI(append(show, want)...)
			if strings.ReplaceAll(a, c.dst, "DST") != strings.ReplaceAll(b, want, "DST") || a == "" {
				t.Errorf("%s: %v differs from the local run's:\n%s\n---\n%s", c.name, show, a, b)
			}
		}
		dst, _ := storage.OpenURL(t.Context(), c.dst)
		objs, err := dst.List(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if strings.HasPrefix(o.Name, ".statecraft") {
				t.Errorf("%s: helper object %s left in DST", c.name, o.Name)
			}
		}
	}
	for _, c := range []struct{ dst, want string }{
		{roots[storage.GCS] + "/out-uid", "output gs://cli-migrate/out-uid is not empty"},
		{roots[storage.AzBlob] + "/out-uid", "output azblob://cli-migrate/out-uid is not empty"},
		{"gs://no-such-bucket/out", "objects.list gs://no-such-bucket/out/: 404 no such bucket"},
		{"azblob://no-such-container/out", "List Blobs azblob://no-such-container/out/: ContainerNotFound (404)"},
	} {
		code, _, errs := runCLI("migrate", "rescale", roots[storage.GCS]+"/src", c.dst, "--max-parallelism", "256")
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("migrate to %s: exit %d, %s; want %q", c.dst, code, errs, c.want)
		}
	}
}

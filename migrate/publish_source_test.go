package migrate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/statecraft/statecraft/storage"
)

// TestRemoteSourceConcurrent: the copies of a publish run on uploadWorkers goroutines, and each
// asks remote.source for the store of its source directory. Unguarded, the shared map crashed
// the process ("concurrent map writes", seen in cmd/statecraft's suite); each directory must
// also be opened once and handed to every copy from it.
func TestRemoteSourceConcurrent(t *testing.T) {
	root := t.TempDir()
	const dirs, perDir = 16, 8
	for d := 0; d < dirs; d++ {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprint(d)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := &remote{srcs: map[string]storage.Store{}}
	defer func() {
		for _, st := range r.srcs {
			st.Close()
		}
	}()
	got := make([]storage.Store, dirs*perDir)
	var wg sync.WaitGroup
	errs := make(chan error, dirs*perDir)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loc, err := storage.Parse(filepath.Join(root, fmt.Sprint(i%dirs), "f"))
			if err != nil {
				errs <- err
				return
			}
			st, base, err := r.source(context.Background(), loc)
			if err != nil {
				errs <- err
				return
			}
			if base != "f" {
				errs <- fmt.Errorf("copy %d: base %q, want \"f\"", i, base)
			}
			got[i] = st
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(r.srcs) != dirs {
		t.Fatalf("%d source stores opened, want one per directory (%d)", len(r.srcs), dirs)
	}
	for i := range got {
		if got[i] != got[i%dirs] {
			t.Errorf("copy %d got another store than copy %d of the same directory", i, i%dirs)
		}
	}
}

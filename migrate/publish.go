package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/statecraft/statecraft/internal/safeio"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/storage"
)

// An object-store destination (s3://bucket/prefix) has no directory to rename into place, so a
// run there goes like this:
//
//  1. the steps write their new files into a local staging directory, as for a local DST;
//     unchanged source files are not brought there but listed as copies;
//  2. DST/.statecraft-partial is written: the names of every object the run will create, so
//     that an interrupted run's leftovers can be removed exactly (--clean-partial);
//  3. new files are uploaded and unchanged files copied, in parallel (server-side when source
//     and DST are on the same store: CopyObject / UploadPartCopy, no bytes through statecraft);
//  4. the metadata is uploaded as DST/.statecraft-tmp-_metadata, a name Flink never reads;
//  5. verification re-reads the uploaded objects through that metadata (digests, or for a UID
//     rename sizes and ETags of the copies); when every output file is staged, the staged
//     output is verified by digests during step 3 instead, and every uploaded object, that
//     metadata included, is re-read and compared with it byte for byte (see verifyStage);
//  6. DST/_metadata is written: the commit point; then the temporary metadata and the
//     partial list are removed.
//
// A failure before 6 removes what the run uploaded; what could not be removed is named in the
// error and listed in .statecraft-partial.
const (
	partialName = ".statecraft-partial"
	tmpMetadata = safeio.TempPrefix + savepoint.MetadataFileName
)

// testHookPublish, when set, is called at each point of publish ("upload NAME", "temporary
// metadata", "commit"), so that a test can kill the server there.
var testHookPublish func(at string)

// uploadWorkers is how many uploads and copies run at once.
const uploadWorkers = 4

// remote is an object-store destination of a run.
type remote struct {
	dst    storage.Store
	copies []remoteCopy

	// The copies run on uploadWorkers goroutines and each asks source for its store: srcsMu
	// guards the map they share.
	srcsMu sync.Mutex
	srcs   map[string]storage.Store // source stores by directory, for copies
}

// remoteCopy is an unchanged source file that reaches DST by a copy.
type remoteCopy struct {
	name string
	from storage.Location
}

// openRemoteTarget opens an object-store DST and checks it is empty; with clean, the leftovers
// of an interrupted run listed in its .statecraft-partial are removed first.
func openRemoteTarget(ctx context.Context, loc storage.Location, src *savepoint.Savepoint, clean bool, notes io.Writer) (*remote, error) {
	home := src.Store.Location()
	if home.Kind == loc.Kind && home.Bucket == loc.Bucket && (home.Key == loc.Key || strings.HasPrefix(loc.Key+"/", home.Key+"/") || home.Key == "") {
		return nil, fmt.Errorf("output %s is inside the source savepoint %s (refused: the source is never modified)", loc, home)
	}
	dst, err := storage.Open(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if clean {
		if err := cleanPartial(ctx, dst, notes); err != nil {
			dst.Close()
			return nil, err
		}
	}
	objs, err := dst.List(ctx, "")
	if err != nil {
		dst.Close()
		return nil, fmt.Errorf("output %s: %w", loc, err)
	}
	if len(objs) > 0 {
		dst.Close()
		for _, o := range objs {
			if o.Name == partialName {
				return nil, fmt.Errorf("output %s holds %d objects left by an interrupted run (listed in %s); rerun with --clean-partial to remove exactly those", loc, len(objs)-1, loc.Join(partialName))
			}
		}
		return nil, fmt.Errorf("output %s is not empty (%d objects, first %s; refused: give a new prefix)", loc, len(objs), objs[0].Name)
	}
	return &remote{dst: dst, srcs: map[string]storage.Store{}}, nil
}

// cleanPartial removes the objects an interrupted run listed in .statecraft-partial, and the
// list. A DST holding _metadata is a finished savepoint and is never cleaned.
func cleanPartial(ctx context.Context, dst storage.Store, notes io.Writer) error {
	loc := dst.Location()
	if _, err := dst.Stat(ctx, savepoint.MetadataFileName); err == nil {
		return fmt.Errorf("output %s holds a finished savepoint (%s): --clean-partial removes only an interrupted run's leftovers", loc, savepoint.MetadataFileName)
	}
	o, err := dst.Open(ctx, partialName)
	if errors.Is(err, storage.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--clean-partial: %w", err)
	}
	b, err := io.ReadAll(io.NewSectionReader(o, 0, o.Size()))
	o.Close()
	if err != nil {
		return fmt.Errorf("--clean-partial: read %s: %w", loc.Join(partialName), err)
	}
	names := strings.Fields(string(b))
	for _, n := range names {
		if storage.CheckName(n) != nil {
			return fmt.Errorf("--clean-partial: %s names %q, not an object of a run (refused)", loc.Join(partialName), n)
		}
	}
	for _, n := range append(names, partialName) {
		if err := dst.Remove(ctx, n); err != nil {
			return fmt.Errorf("--clean-partial: %w", err)
		}
	}
	if notes != nil {
		fmt.Fprintf(notes, "note: removed %d objects of an interrupted run under %s\n", len(names), loc)
	}
	return nil
}

// publish uploads the staged run to the object-store DST and commits it (see the top of the
// file). data is the encoded _metadata.
func (s *session) publish(ctx context.Context, data []byte, verify func(out *savepoint.Savepoint) error) (err error) {
	r := s.remote
	var uploads []string
	for name := range s.fresh {
		uploads = append(uploads, name)
	}
	sort.Strings(uploads)
	names := append([]string{}, uploads...)
	for _, c := range r.copies {
		names = append(names, c.name)
	}
	names = append(names, tmpMetadata, savepoint.MetadataFileName)
	if err := putObject(ctx, r.dst, partialName, []byte(strings.Join(names, "\n")+"\n")); err != nil {
		return err
	}
	committed, commitTried := false, false
	defer func() {
		if err != nil && !committed {
			if !commitTried {
				names = names[:len(names)-1] // _metadata was never sent
			}
			err = s.unpublish(names, err)
		}
	}()

	// Verification of the staged output overlaps the uploads (see stagedVerify).
	var staged chan error
	if verify != nil && s.stagedVerify {
		staged = make(chan error, 1)
		go func() { staged <- s.verifyStage(verify) }()
		defer func() {
			if staged != nil {
				<-staged // the stage is removed after publish returns
			}
		}()
	}
	s.opt.phase("uploading %d files and copying %d to %s", len(uploads), len(r.copies), r.dst.Location())
	var mu sync.Mutex
	etags := map[string]string{} // ETag of each upload, as its commit returned it
	var jobs []func() error
	for _, name := range uploads {
		jobs = append(jobs, func() error {
			if testHookPublish != nil {
				testHookPublish("upload " + name)
			}
			etag, err := uploadFile(ctx, r.dst, name, filepath.Join(s.stage, filepath.FromSlash(name)))
			mu.Lock()
			etags[name] = etag
			mu.Unlock()
			return err
		})
	}
	for _, c := range r.copies {
		jobs = append(jobs, func() error {
			src, base, err := r.source(ctx, c.from)
			if err != nil {
				return err
			}
			server, err := r.dst.Copy(ctx, c.name, src, base)
			mu.Lock()
			if server {
				s.report.Linked++
			} else {
				s.report.Copied++
			}
			mu.Unlock()
			return err
		})
	}
	if err := runJobs(uploadWorkers, jobs); err != nil {
		return err
	}
	if testHookPublish != nil {
		testHookPublish("temporary metadata")
	}
	if err := putObject(ctx, r.dst, tmpMetadata, data); err != nil {
		return err
	}
	if staged != nil {
		err := <-staged
		staged = nil
		if err != nil {
			return err
		}
		s.opt.phase("verifying the output on %s", r.dst.Location())
		if err := s.checkUploads(ctx, etags); err != nil {
			return err
		}
		if err := s.compareUploads(ctx, append(uploads, tmpMetadata)); err != nil {
			return err
		}
	} else if verify != nil {
		s.opt.phase("verifying the output on %s", r.dst.Location())
		if err := s.checkUploads(ctx, etags); err != nil {
			return err
		}
		out, err := savepoint.OpenWith(ctx, r.dst.Location().String(), savepoint.Options{MetadataName: tmpMetadata})
		if err != nil {
			return fmt.Errorf("verify: re-open the output: %w", err)
		}
		err = verify(out)
		out.Close()
		if err != nil {
			return err
		}
	}
	if testHookPublish != nil {
		testHookPublish("commit")
	}
	commitTried = true
	s.opt.phase("writing %s", r.dst.Location().Join(savepoint.MetadataFileName))
	if err := putObject(ctx, r.dst, savepoint.MetadataFileName, data); err != nil {
		return err
	}
	committed = true
	// The savepoint is complete; the helpers' removal failing leaves only litter, said so.
	for _, n := range []string{tmpMetadata, partialName} {
		if err := r.dst.Remove(ctx, n); err != nil && s.opt.Notes != nil {
			fmt.Fprintf(s.opt.Notes, "note: the savepoint is complete, but %s was not removed: %v\n", r.dst.Location().Join(n), err)
		}
	}
	return nil
}

// unpublish removes the objects of a failed run (on a fresh context: the run's may be the
// reason it failed) and returns cause with the names of the objects that could not be removed.
func (s *session) unpublish(names []string, cause error) error {
	ctx := context.Background()
	var left []string
	for _, n := range append(names, partialName) {
		if err := s.remote.dst.Remove(ctx, n); err != nil {
			left = append(left, n)
		}
	}
	if len(left) == 0 {
		return fmt.Errorf("%w (the objects uploaded to %s were removed)", cause, s.remote.dst.Location())
	}
	return fmt.Errorf("%w; the run could not remove what it may have left under %s (listed in %s; rerun with --clean-partial to remove exactly those): %s",
		cause, s.remote.dst.Location(), partialName, strings.Join(left, " "))
}

// source returns the store holding a source file and its name there.
func (r *remote) source(ctx context.Context, loc storage.Location) (storage.Store, string, error) {
	dir, base := loc.Dir()
	key := dir.String()
	r.srcsMu.Lock()
	defer r.srcsMu.Unlock()
	if st, ok := r.srcs[key]; ok {
		return st, base, nil
	}
	st, err := storage.Open(ctx, dir)
	if err != nil {
		return nil, "", err
	}
	r.srcs[key] = st
	return st, base, nil
}

func (r *remote) close() {
	r.dst.Close()
	for _, st := range r.srcs {
		st.Close()
	}
}

func putObject(ctx context.Context, dst storage.Store, name string, data []byte) error {
	return storage.WriteFrom(ctx, dst, name, bytes.NewReader(data))
}

// uploadFile uploads a staged file and returns the new object's ETag.
func uploadFile(ctx context.Context, dst storage.Store, name, file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return storage.Upload(ctx, dst, name, f)
}

// checkUploads lists DST once and checks that every uploaded object is there with the size of
// its staged file and the ETag its upload committed (which the writer checked against the MD5s
// of every part it sent, see storage's s3Writer): the objects verification is about to read are
// the ones uploaded, whole, not an older or interleaved write.
func (s *session) checkUploads(ctx context.Context, etags map[string]string) error {
	r := s.remote
	listed, err := r.dst.List(ctx, "")
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	byName := make(map[string]storage.Info, len(listed))
	for _, o := range listed {
		byName[o.Name] = o
	}
	for name, etag := range etags {
		o, ok := byName[name]
		where := r.dst.Location().Join(name)
		fi, err := os.Stat(filepath.Join(s.stage, filepath.FromSlash(name)))
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		switch {
		case !ok:
			return fmt.Errorf("verify: %s was uploaded but is not listed", where)
		case o.Size != fi.Size():
			return fmt.Errorf("verify: %s has %d bytes, its staged file %d", where, o.Size, fi.Size())
		case etag != "" && o.ETag != etag:
			return fmt.Errorf("verify: %s has ETag %q, its upload committed %q (the object changed, or the server's listing is stale)", where, o.ETag, etag)
		}
	}
	return nil
}

// runJobs runs jobs on workers goroutines and returns the first error; a worker stops taking
// jobs after its first error, the others go on with theirs.
func runJobs(workers int, jobs []func() error) error {
	ch := make(chan func() error)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var first error
			for job := range ch {
				if first == nil {
					first = job()
				}
			}
			errs <- first
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	close(errs)
	for e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// A run whose every output file is staged (no unchanged file reaches DST by a copy) and that is
// verified by digests verifies the staged output, as a local run verifies its stage, while the
// uploads go on: the server is busy taking the bytes and statecraft's core would otherwise wait.
// Verification then re-reads every uploaded object, the temporary metadata included, and
// compares it byte for byte with its staged file (compareUploads): what DST holds is what was
// verified, every byte of it, headers included (the digests cover entries). The uploads and the
// re-read are the same as the other way's, which re-reads DST through the temporary metadata
// and digests it there, one step after the other; a run with copies still does that, since its
// stage does not hold the copied files.

// verifyStage verifies the staged output (stage/_metadata and the staged state files).
func (s *session) verifyStage(verify func(out *savepoint.Savepoint) error) error {
	out, err := savepoint.Open(s.stage)
	if err != nil {
		return fmt.Errorf("verify: re-open the output: %w", err)
	}
	defer out.Close()
	return verify(out)
}

// compareChunk is how much of an uploaded object and of its staged file compareUploads holds at
// a time.
const compareChunk = 1 << 20

// compareUploads re-reads each uploaded object from DST (the temporary metadata as
// tmpMetadata, compared with stage/_metadata) and compares it byte for byte with its staged
// file, in parallel.
func (s *session) compareUploads(ctx context.Context, names []string) error {
	var jobs []func() error
	for _, name := range names {
		jobs = append(jobs, func() error {
			file := name
			if name == tmpMetadata {
				file = savepoint.MetadataFileName
			}
			return s.compareUpload(ctx, name, filepath.Join(s.stage, filepath.FromSlash(file)))
		})
	}
	return runJobs(uploadWorkers, jobs)
}

func (s *session) compareUpload(ctx context.Context, name, file string) error {
	where := s.remote.dst.Location().Join(name)
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	o, err := s.remote.dst.Open(ctx, name)
	if err != nil {
		return fmt.Errorf("verify: re-read %s: %w", where, err)
	}
	defer o.Close()
	if o.Size() != fi.Size() {
		return fmt.Errorf("verify: %s has %d bytes, its staged file %d", where, o.Size(), fi.Size())
	}
	got, want := make([]byte, compareChunk), make([]byte, compareChunk)
	for off := int64(0); off < fi.Size(); {
		n := int(min(int64(compareChunk), fi.Size()-off))
		if _, err := o.ReadAt(got[:n], off); err != nil && !(err == io.EOF && off+int64(n) == fi.Size()) {
			return fmt.Errorf("verify: re-read %s: %w", where, err)
		}
		if _, err := f.ReadAt(want[:n], off); err != nil && err != io.EOF {
			return fmt.Errorf("verify: %w", err)
		}
		if !bytes.Equal(got[:n], want[:n]) {
			i := 0
			for got[i] == want[i] {
				i++
			}
			return fmt.Errorf("verify: %s differs from the verified staged output at offset %d (%#02x, staged %#02x): the object changed after its upload, or was damaged on the way", where, off+int64(i), got[i], want[i])
		}
		off += int64(n)
	}
	return nil
}

package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/statecraft/statecraft/internal/safeio"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/storage"
)

// LinkMode says how unchanged state files reach the output.
type LinkMode int

const (
	// LinkHard hard-links unchanged files, copying when the output is on another file system.
	LinkHard LinkMode = iota
	// LinkCopy always copies.
	LinkCopy
)

// ParseLinkMode parses "hard" or "copy".
func ParseLinkMode(s string) (LinkMode, error) {
	switch s {
	case "", "hard":
		return LinkHard, nil
	case "copy":
		return LinkCopy, nil
	}
	return 0, fmt.Errorf("link mode %q: want hard or copy", s)
}

// Options control a run.
type Options struct {
	// PathMap rewrites the source's absolute state-file paths (--path-map, see savepoint.Options).
	PathMap []savepoint.PathMapping
	Link    LinkMode
	DryRun  bool // validate and report what would change; write nothing
	// NoVerify skips re-reading the output (verification is on by default).
	NoVerify bool
	// Progress receives progress lines for long runs (nil: quiet; give it a terminal only).
	Progress io.Writer
	// Notes receives warnings that do not stop the run, such as leftovers of killed runs.
	Notes io.Writer
	// CleanPartial removes, before the run, the objects an interrupted run to the same
	// object-store DST listed in its .statecraft-partial (never a DST holding _metadata).
	CleanPartial bool
	// SpillBudget bounds the bytes of entries a rescale holds in memory at once (0: 64 MiB).
	SpillBudget int64
}

// Step is one migration step. Steps are applied in order to the working metadata; check runs
// before anything is written (on a scratch copy), apply does the work.
type Step interface {
	// Describe says what the step does, for reports.
	Describe() string
	apply(s *session) (*StepReport, error)
}

// Report is what a run did, step by step (JSON for --report).
type Report struct {
	Source string        `json:"source"`
	Target string        `json:"target"`
	DryRun bool          `json:"dryRun"`
	Steps  []*StepReport `json:"steps"`
	Verify []VerifyRow   `json:"verify,omitempty"`
	// Result is the savepoint_metadata rows of the output (of what it would be, in a dry run).
	// In a dry run, sizes of rescaled operators are those of the source.
	Result []savepoint.MetadataRow `json:"result"`
	// Linked counts hard links, or server-side copies on an object store.
	Linked  int   `json:"filesLinked"`
	Copied  int   `json:"filesCopied"`
	Written int   `json:"filesWritten"`
	Bytes   int64 `json:"bytesWritten"`
}

// StepReport records one step with before/after counts per operator.
type StepReport struct {
	Step      string           `json:"step"`
	Operators []OperatorChange `json:"operators"`
}

// OperatorChange is what a step did to one operator.
type OperatorChange struct {
	Operator          string         `json:"operator"` // label before the step
	UIDHashBefore     string         `json:"uidHashBefore"`
	UIDHashAfter      string         `json:"uidHashAfter"`
	UIDAfter          string         `json:"uidAfter,omitempty"`
	ParallelismBefore int32          `json:"parallelismBefore"`
	ParallelismAfter  int32          `json:"parallelismAfter"`
	MaxParBefore      int32          `json:"maxParallelismBefore"`
	MaxParAfter       int32          `json:"maxParallelismAfter"`
	EntriesBefore     map[string]int `json:"entriesBefore,omitempty"` // per keyed state (timers included)
	EntriesAfter      map[string]int `json:"entriesAfter,omitempty"`
	// EntriesPerSubtask are the keyed entries each subtask of the result holds (rescale only).
	EntriesPerSubtask []int `json:"entriesPerSubtask,omitempty"`
	// Set, Added and Deleted count, per state, the entries a patch replaced, added and removed.
	Set     map[string]int `json:"set,omitempty"`
	Added   map[string]int `json:"added,omitempty"`
	Deleted map[string]int `json:"deleted,omitempty"`
	// BytesRemoved are the key and value bytes of the entries a purge removed, per state.
	BytesRemoved map[string]int64 `json:"bytesRemoved,omitempty"`
	Note         string           `json:"note,omitempty"`
	// Offsets are a source's splits before and after an offsets step.
	Offsets []OffsetRow `json:"offsets,omitempty"`
}

// session is one run's state.
type session struct {
	src    *savepoint.Savepoint
	m      *metadata.Metadata // working copy
	stage  string             // staging directory ("" in a dry run)
	opt    Options
	digest Digest           // the source's sums, transformed by each step (nil without verification)
	fresh  map[string]int64 // files written by steps into stage (relative name -> size)
	// checks prove, on the re-opened output, what steps changed and took out of the digest
	// comparison (Digest.proveElsewhere); each returns its rows and the first difference.
	checks  []func(out *savepoint.Savepoint) ([]VerifyRow, string, error)
	offsets []*offsetsPromise // what offsets steps promised, per source operator
	// srcMax is, for operators whose new max parallelism a validation or dry run recorded
	// without rewriting their files, the max parallelism the files were written with.
	srcMax map[*metadata.OperatorState]int32
	// dryCount is, for operators a dry run rescaled without rewriting their subtasks, the
	// number of subtask states the real run writes (one per new subtask), so that the dry run's
	// result rows are the real run's.
	dryCount map[*metadata.OperatorState]int
	report   *Report
	// remote is the object-store destination (nil for a local DST): finish lists unchanged
	// files as copies instead of bringing them into the stage, and publish uploads.
	remote *remote
	// stagedVerify: publish verifies the staged output while it uploads, then compares the
	// uploaded objects with it byte for byte (see verifyStage in publish.go).
	stagedVerify bool
}

// Run migrates the savepoint at src into the new directory dst with steps.
func Run(src, dst string, steps []Step, opt Options) (rep *Report, err error) {
	if len(steps) == 0 {
		return nil, errors.New("migrate: no steps")
	}
	dstLoc, err := storage.Parse(dst)
	if err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if opt.CleanPartial && dstLoc.Kind == storage.Local {
		return nil, fmt.Errorf("--clean-partial applies to an object-store output; %s is a local directory (a killed local run leaves %s%s* directories beside it, never inside)", dst, filepath.Base(dst), stageInfix)
	}
	ctx := context.Background()
	sp, err := savepoint.OpenWith(ctx, src, savepoint.Options{PathMap: opt.PathMap})
	if err != nil {
		return nil, err
	}
	if needsConversion(sp.Metadata, steps) {
		sp.Close()
		return runConverted(src, dst, dstLoc, steps, opt)
	}
	defer sp.Close()
	var rem *remote
	if dstLoc.Kind != storage.Local {
		if rem, err = openRemoteTarget(ctx, dstLoc, sp, opt.CleanPartial && !opt.DryRun, opt.Notes); err != nil {
			return nil, err
		}
		defer rem.close()
		dst = dstLoc.String()
	} else {
		if dst, err = filepath.Abs(dstLoc.Path); err != nil {
			return nil, err
		}
		if err := checkTarget(sp.Dir, dst); err != nil {
			return nil, err
		}
	}
	// A scratch run on a second copy of the metadata validates every step (selectors, targets,
	// key types) before anything is written.
	scratch, err := decodeAgain(sp)
	if err != nil {
		return nil, err
	}
	ss := &session{src: sp, m: scratch, opt: opt, fresh: map[string]int64{}, srcMax: map[*metadata.OperatorState]int32{},
		dryCount: map[*metadata.OperatorState]int{}, report: &Report{Source: sp.Dir, Target: dst, DryRun: true}}
	defer opt.phase("")
	opt.phase("validating the steps against %s", sp.Dir)
	if opt.DryRun && !opt.NoVerify && !keepsStateBytes(steps) {
		// State steps count entries per state from the source's digest, carried through the
		// steps, when the run has one: the dry run leaves the files as they are, and a later
		// step must not count what an earlier one dropped. This costs the dry run the run's
		// read of the source. (Without a digest, --no-verify, both count what they scan.)
		opt.phase("checksumming the source")
		if ss.digest, err = DigestOf(sp); err != nil {
			return nil, fmt.Errorf("checksum the source: %w", err)
		}
		opt.phase("validating the steps against %s", sp.Dir)
	}
	for _, st := range steps {
		r, err := st.apply(ss)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.Describe(), err)
		}
		ss.report.Steps = append(ss.report.Steps, r)
	}
	if opt.DryRun {
		ss.report.Result = savepoint.MetadataRows(ss.m)
		for i, op := range ss.m.Operators {
			if n, ok := ss.dryCount[op]; ok {
				ss.report.Result[i].SubtaskStateCount = n
			}
		}
		return ss.report, nil
	}

	opt.phase("")
	work, err := decodeAgain(sp)
	if err != nil {
		return nil, err
	}
	var stage string
	if rem != nil {
		// The new files are staged on the local disk and uploaded from there; the stage is
		// never the result, so it always goes.
		if stage, err = os.MkdirTemp("", "statecraft-stage-"); err != nil {
			return nil, fmt.Errorf("create a local staging directory: %w", err)
		}
		defer os.RemoveAll(stage)
		defer markScratch(stage)()
	} else {
		warnLeftovers(dst, opt.Notes)
		if stage, err = os.MkdirTemp(filepath.Dir(dst), filepath.Base(dst)+stageInfix); err != nil {
			return nil, fmt.Errorf("create staging directory next to %s: %w", dst, err)
		}
		defer func() {
			if err != nil {
				os.RemoveAll(stage)
			}
		}()
	}
	// MkdirTemp makes the directory private; a savepoint directory is as readable as any other.
	if err = os.Chmod(stage, 0o755); err != nil {
		return nil, err
	}
	s := &session{src: sp, m: work, stage: stage, opt: opt, fresh: map[string]int64{},
		report: &Report{Source: sp.Dir, Target: dst}, remote: rem}
	// Runs that keep every state byte (UID renames) are verified by file identity instead of
	// digests (see verifyUnchanged), so the source is not read for them.
	byIdentity := !opt.NoVerify && keepsStateBytes(steps)
	switch {
	case byIdentity && rem != nil && rem.dst.Location().Kind == sp.Store.Location().Kind && sp.Store.Location().Kind != storage.Local:
		// Server-side copies on one object store: no state byte passes through statecraft, and
		// none is read. The metadata's offsets are trusted (Flink checks them on restore), the
		// files reach DST byte for byte and are proven there by size and ETag; reading every
		// block start would download far more than the copy moves (a ranged GET per block).
	case byIdentity:
		if err = CheckSource(sp); err != nil {
			return nil, fmt.Errorf("check the source: %w", err)
		}
	case !opt.NoVerify:
		opt.phase("checksumming the source")
		if s.digest, err = digestOf(sp, readByFirstStep(steps, sp.Metadata)); err != nil {
			return nil, fmt.Errorf("checksum the source: %w", err)
		}
	}
	for i, st := range steps {
		opt.phase("step %d/%d: %s", i+1, len(steps), st.Describe())
		r, err := st.apply(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.Describe(), err)
		}
		s.report.Steps = append(s.report.Steps, r)
		if i == 0 {
			// What the first step left unsummed (a rescale that changed nothing keeps its
			// files) is summed from the source now, before a later step uses the digest.
			if err := s.sumPending(); err != nil {
				return nil, fmt.Errorf("checksum the source: %w", err)
			}
		}
	}
	if err := s.finish(); err != nil {
		return nil, err
	}
	s.report.Result = savepoint.MetadataRows(s.m)
	if testHookBeforeVerify != nil {
		testHookBeforeVerify(stage)
	}
	if rem != nil {
		data, err := os.ReadFile(filepath.Join(stage, savepoint.MetadataFileName))
		if err != nil {
			return nil, err
		}
		var verify func(out *savepoint.Savepoint) error
		if !opt.NoVerify {
			verify = func(out *savepoint.Savepoint) error { return s.verifyOutput(out, byIdentity) }
		}
		s.stagedVerify = !byIdentity && len(rem.copies) == 0
		if err := s.publish(ctx, data, verify); err != nil {
			if s.report.Verify != nil {
				return s.report, err
			}
			return nil, err
		}
		return s.report, nil
	}
	if !opt.NoVerify {
		opt.phase("verifying the output")
		out, err := savepoint.Open(stage)
		if err != nil {
			return nil, fmt.Errorf("verify: re-open the output: %w", err)
		}
		err = s.verifyOutput(out, byIdentity)
		out.Close()
		if err != nil {
			if s.report.Verify != nil {
				return s.report, err
			}
			return nil, err
		}
	}
	// Go's os.Rename refuses to replace a directory; an empty DST (checked at the start) is
	// removed first. os.Remove fails if something appeared in it meanwhile.
	if fi, statErr := os.Stat(dst); statErr == nil && fi.IsDir() {
		if err := os.Remove(dst); err != nil {
			return nil, fmt.Errorf("output %s: %w", dst, err)
		}
	}
	if err := os.Rename(stage, dst); err != nil {
		return nil, fmt.Errorf("move the finished output into place: %w", err)
	}
	if err := safeio.SyncDir(filepath.Dir(dst)); err != nil {
		return s.report, err
	}
	return s.report, nil
}

// sumPending sums, from the source savepoint, the keyed state of every operator whose digest
// is still pending (digestOf). The first step has run, and it changes no operator id.
func (s *session) sumPending() error {
	for id, d := range s.digest {
		if !d.pendingKeyed {
			continue
		}
		var op *metadata.OperatorState
		for _, o := range s.src.Metadata.Operators {
			if o.ID == id {
				op = o
			}
		}
		if op == nil {
			return fmt.Errorf("operator %s is not in the source", d.Label)
		}
		if err := digestKeyed(s.src, op, d); err != nil {
			return err
		}
	}
	return nil
}

// readByFirstStep returns the operators whose keyed state the first step reads in full from
// the source before anything else touches it, so that it sums their entries as it reads them
// instead of the source being read once more just for the digest: the operators a first
// Rescale rescales.
func readByFirstStep(steps []Step, m *metadata.Metadata) map[metadata.OperatorID]bool {
	if _, ok := steps[0].(*Load); ok {
		// A load replaces all keyed state: its sums are those of what it writes.
		ids := map[metadata.OperatorID]bool{}
		for _, op := range m.Operators {
			if hasKeyed(op) {
				ids[op.ID] = true
			}
		}
		return ids
	}
	r, ok := steps[0].(*Rescale)
	if !ok {
		return nil
	}
	ops, err := r.targets(m)
	if err != nil {
		return nil
	}
	ids := map[metadata.OperatorID]bool{}
	for _, op := range ops {
		ids[op.ID] = true
	}
	return ids
}

// phase shows on the progress terminal what the run is doing now, in place of the line before
// ("" clears it).
func (o Options) phase(format string, a ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "\r\033[K"+format, a...)
	}
}

// verifyOutput re-reads the output and compares it with what the source promised: digests of
// every entry, or for a run that keeps every state byte, file identity (verifyUnchanged). The
// rows go into the report; it is set only when the output could be read.
func (s *session) verifyOutput(out *savepoint.Savepoint, byIdentity bool) error {
	var rows []VerifyRow
	var diff string
	var err error
	if byIdentity {
		rows, diff, err = verifyUnchanged(s.src, s.m, out)
	} else {
		var got Digest
		if got, err = DigestOf(out); err == nil {
			rows, diff = Compare(s.digest, got)
		}
		for _, check := range s.checks {
			if err != nil {
				break
			}
			var more []VerifyRow
			var d string
			more, d, err = check(out)
			rows = append(rows, more...)
			if diff == "" {
				diff = d
			}
		}
	}
	if err != nil {
		return fmt.Errorf("verify: read the output back: %w", err)
	}
	s.report.Verify = rows
	if diff != "" {
		return fmt.Errorf("verify: the output does not hold what the source promised, output removed: %s", diff)
	}
	return nil
}

// testHookBeforeVerify lets a test damage the staging directory before verification.
var testHookBeforeVerify func(stage string)

// stageInfix names staging directories: DST.statecraft-tmp-XXXX.
const stageInfix = ".statecraft-tmp-"

// inside reports whether path p is dir or lies below it (lexically).
func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

func checkTarget(srcDir, dst string) error {
	if inside(srcDir, dst) {
		return fmt.Errorf("output %s is inside the source savepoint %s (refused: the source is never modified)", dst, srcDir)
	}
	// The same check on the real paths: DST's parent may be a symbolic link into the source,
	// and the staging directory is made in that parent.
	realSrc, err1 := filepath.EvalSymlinks(srcDir)
	realParent, err2 := filepath.EvalSymlinks(filepath.Dir(dst))
	if err1 == nil && err2 == nil {
		if inside(realSrc, filepath.Join(realParent, filepath.Base(dst))) {
			return fmt.Errorf("output %s is inside the source savepoint %s through a symbolic link (refused: the source is never modified)", dst, srcDir)
		}
	}
	fi, err := os.Stat(dst)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if _, err := os.Stat(filepath.Dir(dst)); err != nil {
			return fmt.Errorf("output %s: parent directory: %w", dst, err)
		}
		return nil
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("output %s: a parent of it is a file, not a directory", dst)
	case err != nil:
		return fmt.Errorf("output %s: %w", dst, err)
	case !fi.IsDir():
		return fmt.Errorf("output %s exists and is not a directory (refused)", dst)
	}
	ents, err := os.ReadDir(dst)
	if err != nil {
		return fmt.Errorf("output %s: %w", dst, err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("output %s exists and is not empty (refused: give a new directory)", dst)
	}
	return nil
}

// warnLeftovers mentions staging directories of killed runs for the same target.
func warnLeftovers(dst string, w io.Writer) {
	if w == nil {
		return
	}
	ents, err := os.ReadDir(filepath.Dir(dst))
	if err != nil {
		return
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), filepath.Base(dst)+stageInfix) {
			fmt.Fprintf(w, "note: %s is left over from an interrupted run; it is not used and can be removed\n", filepath.Join(filepath.Dir(dst), e.Name()))
		}
	}
}

func decodeAgain(sp *savepoint.Savepoint) (*metadata.Metadata, error) {
	b, err := sp.ReadMetadata()
	if err != nil {
		return nil, err
	}
	return metadata.Decode(bytes.NewReader(b), sp.MetadataPath)
}

// finish brings every file the working metadata references into the staging directory, removes
// step files nothing references any more, and writes _metadata last.
func (s *session) finish() error {
	used := map[string]bool{}
	byName := map[string]string{} // output name -> source path, to catch base-name clashes
	err := walkStreams(s.m, func(label string, h *metadata.StreamHandle) error {
		switch x := (*h).(type) {
		case nil, *metadata.ByteStreamHandle, *metadata.EmptySegmentFileHandle:
			return nil
		case *metadata.RelativeFileHandle:
			if _, ok := s.fresh[x.Path]; ok {
				used[x.Path] = true
				return nil
			}
		case *metadata.FileHandle:
		case *metadata.SegmentFileHandle:
			return fmt.Errorf("%s: file-merging segment handle (tag 15) in %s: not supported", label, x.Path)
		default:
			return fmt.Errorf("%s: unsupported stream handle tag %d", label, x.Tag())
		}
		st, err := s.src.OpenStream(*h)
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		defer st.Close()
		from := st.Name
		size := st.Size()
		name := path.Base(st.File.String())
		if st.File.Kind == storage.Local {
			name = filepath.Base(st.File.Path)
		}
		if prev, ok := byName[name]; ok && prev != from {
			return fmt.Errorf("%s: two state files are both named %q (%s and %s); cannot make them relative", label, name, prev, from)
		}
		if _, ok := byName[name]; !ok {
			byName[name] = from
			if s.remote != nil {
				s.remote.copies = append(s.remote.copies, remoteCopy{name: name, from: st.File})
			} else if err := s.bring(st, name); err != nil {
				return err
			}
		}
		*h = &metadata.RelativeFileHandle{Path: name, Size: size}
		return nil
	})
	if err != nil {
		return err
	}
	for name := range s.fresh {
		if !used[name] {
			if err := os.Remove(filepath.Join(s.stage, name)); err != nil {
				return err
			}
			delete(s.fresh, name) // what remains in fresh is what publish uploads
			continue
		}
		s.report.Written++
		s.report.Bytes += s.fresh[name]
	}
	os.RemoveAll(filepath.Join(s.stage, spillDir))
	var buf bytes.Buffer
	if err := metadata.Encode(&buf, s.m); err != nil {
		return fmt.Errorf("encode _metadata: %w", err)
	}
	if err := safeio.WriteFile(filepath.Join(s.stage, savepoint.MetadataFileName), buf.Bytes(), 0o644); err != nil {
		return err
	}
	return nil
}

// bring hard-links (or copies) the source file of the whole-file stream st to stage/name; a
// file on an object store is downloaded.
func (s *session) bring(st *savepoint.Stream, name string) error {
	to := filepath.Join(s.stage, name)
	from := st.Name
	if s.opt.Link == LinkHard && st.File.Kind == storage.Local {
		if err := os.Link(st.File.Path, to); err == nil {
			s.report.Linked++
			return nil
		}
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.NewSectionReader(st, 0, st.Size())); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", from, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: fsync: %w", from, err)
	}
	s.report.Copied++
	return out.Close()
}

// walkStreams calls fn with a pointer to every stream handle slot of m that can name a file, so
// that fn may replace the handle. Changelog handles are refused.
func walkStreams(m *metadata.Metadata, fn func(label string, h *metadata.StreamHandle) error) error {
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			if st == nil || st.Finished {
				continue
			}
			label := fmt.Sprintf("operator %s subtask %d", Label(op), st.Index)
			for _, oh := range []metadata.OperatorHandle{st.ManagedOperator, st.RawOperator} {
				if h, ok := oh.(*metadata.OperatorStreamHandle); ok {
					if err := fn(label+" operator state", &h.Delegate); err != nil {
						return err
					}
				}
			}
			for _, kh := range []metadata.KeyedHandle{st.ManagedKeyed, st.RawKeyed} {
				switch h := kh.(type) {
				case nil:
				case *metadata.KeyGroupsHandle:
					if err := fn(label+" keyed state", &h.Delegate); err != nil {
						return err
					}
				case *metadata.IncrementalHandle:
					if err := fn(label+" native keyed state", &h.MetaData); err != nil {
						return err
					}
					for i := range h.Shared {
						if err := fn(label+" native keyed state", &h.Shared[i].Handle); err != nil {
							return err
						}
					}
					for i := range h.Private {
						if err := fn(label+" native keyed state", &h.Private[i].Handle); err != nil {
							return err
						}
					}
				default:
					return fmt.Errorf("%s: changelog keyed state (tag %d) is not supported", label, kh.Tag())
				}
			}
			for _, ch := range append(append([]*metadata.ChannelHandle{}, st.InputChannels...), st.OutputChannels...) {
				if err := fn(label+" channel state", &ch.Delegate); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

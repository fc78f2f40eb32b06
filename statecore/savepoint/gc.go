package savepoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/statecraft/statecraft/internal/safeio"
	"github.com/statecraft/statecraft/statecore/metadata"
)

// Garbage in a job's checkpoint directory: files under shared/ and taskowned/ that no complete
// checkpoint's _metadata references. Flink deletes a subsumed checkpoint's files itself, but a
// job that was killed, a failed or aborted checkpoint, or a JobManager failover leaves them.
//
// A file is referenced when its base name is the base name of any file handle of any complete
// chk-N: Flink names state files by random UUIDs, and matching by base name holds whether the
// directory is where Flink wrote it or was copied elsewhere (checkpoint metadata holds absolute
// paths). The rule errs on the side of keeping. A handle kind this walk does not know refuses the
// whole collection rather than guess which files it keeps alive.
//
// A file younger than the minimum age is kept even when nothing references it: Flink uploads a
// checkpoint's shared files before it creates chk-N/_metadata (and, with file merging or for
// task-owned state, possibly before chk-N/ exists at all), so a checkpoint in progress that has
// no chk-N yet looks exactly like garbage. Only the file's modification time tells them apart.

// GCFile is one unreferenced file.
type GCFile struct {
	Path string `json:"path"` // relative to the job's checkpoint directory: shared/<uuid>
	Size int64  `json:"size"`
}

// GCPlan is what `checkpoint gc` would delete.
type GCPlan struct {
	Dir string `json:"dir"`
	// Complete are the ids of the complete checkpoints whose references were collected.
	Complete []int64 `json:"complete"`
	// InProgress are incomplete chk-N newer than the newest complete one: Flink may be writing
	// them, and their files are not referenced by any _metadata yet.
	InProgress []int64  `json:"inProgress,omitempty"`
	Referenced int      `json:"referenced"` // files under shared/ and taskowned/ kept
	Garbage    []GCFile `json:"garbage"`
	Total      int64    `json:"total"` // bytes of Garbage
	// TooNew are unreferenced files modified less than MinAge before the plan was made: kept,
	// since they may belong to a checkpoint in progress.
	TooNew []GCFile `json:"tooNew,omitempty"`
	MinAge string   `json:"minAge"`

	cutoff time.Time // files modified after it are not garbage (zero: no minimum age)
}

// GCOptions says which unreferenced files count as garbage.
type GCOptions struct {
	// MinAge keeps every file modified less than MinAge before Now (0 keeps none back).
	MinAge time.Duration
	// Now is the reference time for MinAge (zero: the current time).
	Now time.Time
}

// PlanGC finds the unreferenced files of the job's checkpoint directory dir that are at least
// opt.MinAge old.
func PlanGC(dir string, opt GCOptions) (*GCPlan, error) {
	if opt.MinAge < 0 {
		return nil, fmt.Errorf("checkpoint gc: minimum age %s is negative", opt.MinAge)
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	cutoff := opt.Now.Add(-opt.MinAge)
	list, err := ListCheckpoints(dir)
	if err != nil {
		return nil, err
	}
	p := &GCPlan{Dir: dir, Garbage: []GCFile{}, MinAge: opt.MinAge.String()}
	if opt.MinAge > 0 {
		p.cutoff = cutoff
	}
	refs := map[string]bool{}
	for _, c := range list {
		if !c.Complete {
			continue
		}
		p.Complete = append(p.Complete, c.ID)
		for _, op := range c.meta.Operators {
			for _, st := range op.Subtasks {
				if st == nil {
					continue
				}
				hs := []any{st.ManagedOperator, st.RawOperator, st.ManagedKeyed, st.RawKeyed}
				for _, ch := range append(append([]*metadata.ChannelHandle{}, st.InputChannels...), st.OutputChannels...) {
					hs = append(hs, ch)
				}
				for _, h := range hs {
					if err := handleFiles(h, func(p string) { refs[filepath.Base(filepath.FromSlash(p))] = true }); err != nil {
						return nil, fmt.Errorf("%s: operator %s subtask %d: %w (not collecting garbage)", c.Dir, op.ID, st.Index, err)
					}
				}
			}
		}
	}
	if len(p.Complete) == 0 {
		return nil, fmt.Errorf("%s: no complete checkpoint, so nothing tells which files are alive (not collecting garbage)", dir)
	}
	newest := p.Complete[len(p.Complete)-1]
	for _, c := range list {
		if !c.Complete && c.ID > newest {
			p.InProgress = append(p.InProgress, c.ID)
		}
	}
	for _, sub := range []string{"shared", "taskowned"} {
		root := filepath.Join(dir, sub)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && path == root {
					return nil
				}
				return err
			}
			if !d.Type().IsRegular() {
				return nil // directories; symbolic links and devices are never Flink's files
			}
			if refs[d.Name()] {
				p.Referenced++
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			f := GCFile{Path: filepath.ToSlash(rel), Size: fi.Size()}
			if !p.cutoff.IsZero() && fi.ModTime().After(p.cutoff) {
				p.TooNew = append(p.TooNew, f)
				return nil
			}
			p.Garbage = append(p.Garbage, f)
			p.Total += fi.Size()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", root, err)
		}
	}
	for _, l := range [][]GCFile{p.Garbage, p.TooNew} {
		sort.Slice(l, func(i, j int) bool { return l[i].Path < l[j].Path })
	}
	return p, nil
}

// Apply deletes the plan's garbage: exactly the files listed, each checked again to be a regular
// file not modified since the minimum age's cutoff (else it stops there), and syncs the
// directories. With in-progress checkpoints it refuses unless force.
func (p *GCPlan) Apply(force bool) error {
	if len(p.InProgress) > 0 && !force {
		return fmt.Errorf("%s: checkpoint %d is incomplete and newer than the newest complete one (%d): Flink may be writing it, and its files look unreferenced; stop the job (or give --force once it is known dead)",
			p.Dir, p.InProgress[len(p.InProgress)-1], p.Complete[len(p.Complete)-1])
	}
	dirs := map[string]bool{}
	for _, g := range p.Garbage {
		path := filepath.Join(p.Dir, filepath.FromSlash(g.Path))
		fi, err := os.Lstat(path)
		if err != nil {
			return fmt.Errorf("gc: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("gc: %s is no longer a regular file (not deleted)", path)
		}
		if !p.cutoff.IsZero() && fi.ModTime().After(p.cutoff) {
			return fmt.Errorf("gc: %s was modified at %s, after the plan's minimum-age cutoff %s (not deleted)",
				path, fi.ModTime().UTC().Format(time.RFC3339), p.cutoff.UTC().Format(time.RFC3339))
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("gc: %w", err)
		}
		dirs[filepath.Dir(path)] = true
	}
	for d := range dirs {
		if err := safeio.SyncDir(d); err != nil {
			return fmt.Errorf("gc: %w", err)
		}
	}
	return nil
}

// handleFiles calls fn with the path of every file a state handle reads; an error for a handle
// kind it does not know.
func handleFiles(h any, fn func(string)) error {
	switch h := h.(type) {
	case nil, *metadata.ByteStreamHandle, *metadata.EmptySegmentFileHandle, *metadata.ChangelogBytesHandle:
	case *metadata.FileHandle:
		if h != nil {
			fn(h.Path)
		}
	case *metadata.RelativeFileHandle:
		if h != nil {
			fn(h.Path)
		}
	case *metadata.SegmentFileHandle:
		if h != nil {
			fn(h.Path)
		}
	case *metadata.KeyGroupsHandle:
		if h != nil {
			return handleFiles(h.Delegate, fn)
		}
	case *metadata.OperatorStreamHandle:
		if h != nil {
			return handleFiles(h.Delegate, fn)
		}
	case *metadata.ChannelHandle:
		if h != nil {
			return handleFiles(h.Delegate, fn)
		}
	case *metadata.IncrementalHandle:
		if h == nil {
			return nil
		}
		if err := handleFiles(h.MetaData, fn); err != nil {
			return err
		}
		for _, ph := range append(append([]metadata.PathHandle{}, h.Shared...), h.Private...) {
			if err := handleFiles(ph.Handle, fn); err != nil {
				return err
			}
		}
	case *metadata.ChangelogHandle:
		if h == nil {
			return nil
		}
		for _, k := range append(append([]metadata.KeyedHandle{}, h.Materialized...), h.NonMaterialized...) {
			if err := handleFiles(k, fn); err != nil {
				return err
			}
		}
	case *metadata.ChangelogFileHandle:
		if h == nil {
			return nil
		}
		for _, o := range h.Handles {
			if err := handleFiles(o.Handle, fn); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("state handle %T: not known to checkpoint gc", h)
	}
	return nil
}

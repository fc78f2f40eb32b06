package savepoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// CheckpointInfo is one chk-N directory of a job's checkpoint directory, as `checkpoint list`
// shows it.
type CheckpointInfo struct {
	ID  int64  `json:"id"`
	Dir string `json:"dir"` // the chk-N directory
	// Time is when the checkpoint was finished: the modification time of its _metadata (Flink
	// writes it last, once every task acknowledged); for an incomplete one, of the directory.
	Time time.Time `json:"time"`
	// Size is the bytes of the files in the chk-N directory itself (its exclusive state and
	// _metadata); StateSize is what _metadata says the checkpoint holds, shared files included
	// (the sum of operator-total-size-in-bytes), 0 when incomplete.
	Size      int64 `json:"size"`
	StateSize int64 `json:"stateSize"`
	Complete  bool  `json:"complete"`
	// Reason says why an incomplete checkpoint is not complete.
	Reason string `json:"reason,omitempty"`

	meta *metadata.Metadata // the decoded _metadata of a complete checkpoint
}

// ListCheckpoints returns every chk-N directory under a job's checkpoint directory, oldest first,
// each decoded to tell whether Flink completed it. A dir that holds no chk-N directory is an
// error naming it.
func ListCheckpoints(dir string) ([]CheckpointInfo, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint directory: %w", err)
	}
	var out []CheckpointInfo
	for _, e := range ents {
		m := chkDirName.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			continue // more digits than an int64: not a name Flink gives
		}
		out = append(out, inspectCheckpoint(filepath.Join(dir, e.Name()), n))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no chk-N directory (not a job's checkpoint directory: <checkpoints>/<job-id>/ with chk-N/, shared/, taskowned/)", dir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// inspectCheckpoint describes the chk-N directory p.
func inspectCheckpoint(p string, n int64) CheckpointInfo {
	c := CheckpointInfo{ID: n, Dir: p}
	if fi, err := os.Stat(p); err == nil {
		c.Time = fi.ModTime().UTC()
	}
	ents, _ := os.ReadDir(p)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			c.Size += fi.Size()
		}
	}
	mp := filepath.Join(p, MetadataFileName)
	fi, err := os.Stat(mp)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Reason = "no _metadata (in progress, aborted or failed: Flink writes it last)"
		return c
	case err != nil:
		c.Reason = err.Error()
		return c
	}
	c.Time = fi.ModTime().UTC()
	b, err := os.ReadFile(mp)
	if err == nil {
		c.meta, err = metadata.DecodeBytes(b, mp)
	}
	if err != nil {
		c.Reason = fmt.Sprintf("_metadata does not decode: %v", err)
		return c
	}
	if c.meta.CheckpointID != n {
		c.Reason = fmt.Sprintf("_metadata is of checkpoint %d, not %d", c.meta.CheckpointID, n)
		c.meta = nil
		return c
	}
	c.Complete = true
	for _, op := range c.meta.Operators {
		c.StateSize += op.CheckpointedSize()
	}
	return c
}

// CheckpointDir resolves --checkpoint n on path: the chk-n directory of a job's checkpoint
// directory, or path itself when it is that chk-n directory. The checkpoint must be complete; a
// path that is not a job's checkpoint directory (a savepoint, another chk-M, an object store) is
// an error, since the flag could not take effect.
func CheckpointDir(path string, n int64) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("--checkpoint %d: want a checkpoint id (the N of chk-N)", n)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("--checkpoint %d: %w (it takes a job's local checkpoint directory)", n, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("--checkpoint %d: %s is a file; give the job's checkpoint directory", n, path)
	}
	if m := chkDirName.FindStringSubmatch(filepath.Base(filepath.Clean(path))); m != nil {
		if m[1] != strconv.FormatInt(n, 10) {
			return "", fmt.Errorf("--checkpoint %d: %s is checkpoint %s itself; give the job's checkpoint directory (its parent) to choose another", n, path, m[1])
		}
		return checkComplete(inspectCheckpoint(path, n))
	}
	chk := filepath.Join(path, "chk-"+strconv.FormatInt(n, 10))
	if _, err := os.Stat(chk); err != nil {
		list, lerr := ListCheckpoints(path)
		if lerr != nil {
			return "", fmt.Errorf("--checkpoint %d: %w", n, lerr)
		}
		var ids []string
		for _, c := range list {
			ids = append(ids, strconv.FormatInt(c.ID, 10))
		}
		return "", fmt.Errorf("--checkpoint %d: %s has no chk-%d (its checkpoints: %s)", n, path, n, strings.Join(ids, ", "))
	}
	return checkComplete(inspectCheckpoint(chk, n))
}

func checkComplete(c CheckpointInfo) (string, error) {
	if !c.Complete {
		return "", fmt.Errorf("--checkpoint %d: %s is not a complete checkpoint: %s", c.ID, c.Dir, c.Reason)
	}
	return c.Dir, nil
}

package savepoint

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// A job's retained checkpoints live in one directory per job:
//
//	<checkpoints>/<job-id>/
//	  chk-42/_metadata      one directory per retained checkpoint; _metadata names files by
//	  chk-42/<uuid>         ABSOLUTE paths: its exclusive files here,
//	  shared/<uuid>         files several checkpoints share (incremental RocksDB SSTs),
//	  taskowned/<uuid>      files owned by the task managers.
//
// A chk-N directory that was copied or downloaded elsewhere still names the old place. When the
// directory opened is a chk-N whose parent is such a job directory, every absolute path of the
// form OLD/{chk-N,shared,taskowned}/<file> (one OLD for the whole metadata) is read from the
// parent instead: the layout says where the files went. Any other path falls to the usual rules
// (and --path-map).

var chkDirName = regexp.MustCompile(`^chk-([0-9]+)$`)

// jobSubdir reports whether name is one of the directories of a job's checkpoint directory.
func jobSubdir(name string) bool {
	return name == "shared" || name == "taskowned" || chkDirName.MatchString(name)
}

// LatestCheckpoint returns the chk-N directory with the highest N under a job's checkpoint
// directory whose _metadata exists and decodes (a checkpoint Flink completed), or ok false when
// dir holds no chk-N directory at all.
func LatestCheckpoint(dir string) (string, bool, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", false, err
	}
	type chk struct {
		n    int64
		name string
	}
	var chks []chk
	for _, e := range ents {
		if m := chkDirName.FindStringSubmatch(e.Name()); m != nil && e.IsDir() {
			n, err := strconv.ParseInt(m[1], 10, 64)
			if err == nil {
				chks = append(chks, chk{n, e.Name()})
			}
		}
	}
	if len(chks) == 0 {
		return "", false, nil
	}
	sort.Slice(chks, func(i, j int) bool { return chks[i].n > chks[j].n })
	var skipped []string
	for _, c := range chks {
		p := filepath.Join(dir, c.name)
		b, err := os.ReadFile(filepath.Join(p, MetadataFileName))
		if err == nil {
			if _, err = metadata.DecodeBytes(b, p); err == nil {
				return p, true, nil
			}
		}
		skipped = append(skipped, c.name)
	}
	return "", true, fmt.Errorf("%s: no complete checkpoint (%s: no _metadata that decodes)", dir, strings.Join(skipped, ", "))
}

// checkpointMapping returns the rewrite of the original job directory onto the parent of dir when
// dir is a chk-N directory and every absolute handle of m that lies in a job directory's layout
// names the same original job directory.
func checkpointMapping(dir string, m *metadata.Metadata) (PathMapping, bool) {
	if !chkDirName.MatchString(filepath.Base(dir)) {
		return PathMapping{}, false
	}
	job, err := filepath.Abs(filepath.Dir(dir))
	if err != nil {
		return PathMapping{}, false
	}
	var paths []string
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			if st == nil {
				continue
			}
			for _, h := range []any{st.ManagedKeyed, st.RawKeyed, st.ManagedOperator, st.RawOperator} {
				walkPaths(h, func(p string) { paths = append(paths, p) })
			}
		}
	}
	// The original job directory: the parent of the first path's chk-N, shared or taskowned.
	old := ""
	for _, p := range paths {
		lp, err := localPath(p)
		if err != nil {
			continue
		}
		if jobSubdir(filepath.Base(filepath.Dir(lp))) {
			old = filepath.Dir(filepath.Dir(lp))
			break
		}
		if up := filepath.Base(filepath.Dir(filepath.Dir(lp))); up == "shared" || up == "taskowned" {
			old = filepath.Dir(filepath.Dir(filepath.Dir(lp)))
			break
		}
	}
	if old == "" || old == job || old == "/" {
		return PathMapping{}, false
	}
	// Every path the rewrite would catch must be exactly OLD/<job subdirectory>/<file name>, so
	// that it cannot lead out of the job directory ("..", deeper paths).
	for _, p := range paths {
		for _, spell := range spellings(p) {
			rest, found := strings.CutPrefix(spell, old)
			if !found || (rest != "" && rest[0] != '/') {
				continue
			}
			if !inJobLayout(rest) {
				return PathMapping{}, false
			}
		}
	}
	return PathMapping{Old: old, New: job}, true
}

// inJobLayout reports whether rest ("/shared/x", a path below the job directory) is a file of a
// job directory's layout: /<chk-N|shared|taskowned>/<file>, or with file merging (Flink 1.20+)
// one directory deeper under shared/ or taskowned/ (shared/job_<id>_op_<op>_<sub>_<par>/<file>,
// taskowned/job_<id>_tm_<tm>/<file>). Nothing else, so that no ".." or deeper path leads out.
func inJobLayout(rest string) bool {
	parts := strings.Split(rest, "/")
	if len(parts) < 3 || len(parts) > 4 || parts[0] != "" || !jobSubdir(parts[1]) {
		return false
	}
	if len(parts) == 4 && parts[1] != "shared" && parts[1] != "taskowned" {
		return false
	}
	for _, p := range parts[2:] {
		if p == "" || p == "." || p == ".." {
			return false
		}
	}
	return true
}

// walkPaths calls fn with the path of every absolute file handle reachable from h.
func walkPaths(h any, fn func(string)) {
	switch h := h.(type) {
	case *metadata.FileHandle:
		fn(h.Path)
	case *metadata.SegmentFileHandle:
		fn(h.Path)
	case *metadata.KeyGroupsHandle:
		walkPaths(h.Delegate, fn)
	case *metadata.OperatorStreamHandle:
		walkPaths(h.Delegate, fn)
	case *metadata.IncrementalHandle:
		walkPaths(h.MetaData, fn)
		for _, p := range append(append([]metadata.PathHandle{}, h.Shared...), h.Private...) {
			walkPaths(p.Handle, fn)
		}
	}
}

// localPath is the local file path of a "file:" URI or absolute path, cleaned; an error for
// anything else.
func localPath(p string) (string, error) {
	loc, err := absLocation(p)
	if err != nil {
		return "", err
	}
	if loc.Path == "" || !filepath.IsAbs(loc.Path) {
		return "", fmt.Errorf("%s: not a local path", p)
	}
	return filepath.Clean(loc.Path), nil
}

package savepoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/statecraft/statecraft/storage"
)

// target is where an absolute file handle's bytes are: a name in a store.
type target struct {
	store storage.Store
	name  string
	moved bool
}

// resolveAbsolute finds the file an absolute handle (tag 2, 15: "file:/old/sp/abc",
// "s3://bucket/sp/abc", "/old/sp/abc") names, in this order:
//
//  1. a --path-map rewrite whose OLD the path starts with: the file is read where NEW says,
//     even outside the directory (the user named the place);
//  2. a path inside the savepoint directory (as given, or its real path): that file;
//  3. a file with the same base name in the directory: the savepoint was moved or copied (to
//     another disk, bucket or store) and Flink names state files by random UUIDs, so the base
//     name identifies the file (moved is then true);
//  4. on an object store, a key elsewhere on the same kind of store (entropy injection puts
//     state files under random prefixes of the bucket): that key, with the same credentials.
//
// Anything else is refused: a local file outside the directory (an incremental checkpoint's
// shared directory, another job's savepoint, or a hostile path) must be given with --path-map.
func (s *Savepoint) resolveAbsolute(p string) (target, error) {
	if mapped, ok := s.mapPath(p); ok {
		loc, err := absLocation(mapped)
		if err != nil {
			return target{}, fmt.Errorf("%s: state file %s mapped to %s: %w", s.MetadataPath, p, mapped, err)
		}
		return s.elsewhere(loc)
	}
	loc, perr := absLocation(p)
	if perr == nil {
		if rel, ok := s.inside(loc); ok {
			return target{store: s.Store, name: rel}, nil
		}
	}
	base := baseName(p)
	if base != "" && base != MetadataFileName && storage.CheckName(base) == nil {
		if _, err := s.Store.Stat(context.Background(), base); err == nil {
			return target{store: s.Store, name: base, moved: true}, nil
		}
	}
	if perr != nil {
		return target{}, fmt.Errorf("%s: state file %s: %w (and no file named %q is in %s; --path-map OLD=NEW says where such files are)", s.MetadataPath, p, perr, base, s.Dir)
	}
	if home := s.Store.Location(); loc.Kind != storage.Local && loc.Kind == home.Kind {
		return s.elsewhere(loc)
	}
	return target{}, fmt.Errorf("%s: state file %s is outside the savepoint directory %s and no file named %q is in it (refused; --path-map OLD=NEW says where such files are)", s.MetadataPath, p, s.Dir, base)
}

// mapPath applies the first --path-map rule whose OLD is p or a "/"-bounded prefix of it.
func (s *Savepoint) mapPath(p string) (string, bool) {
	for _, m := range s.opt.PathMap {
		for _, spell := range spellings(p) {
			if rest, ok := strings.CutPrefix(spell, m.Old); ok && (rest == "" || rest[0] == '/') {
				return m.New + rest, true
			}
		}
	}
	return "", false
}

// spellings are the forms of one path a user may write in --path-map: Flink writes "file:/a",
// users write "/a" or "file:///a"; Flink's s3a:// and s3p:// are s3:// (ParsePathMap spells a
// rule's OLD that way).
func spellings(p string) []string {
	out := []string{p}
	if rest, ok := strings.CutPrefix(p, "file:"); ok {
		rest = "/" + strings.TrimLeft(rest, "/")
		out = append(out, rest, "file://"+rest)
	}
	for _, alias := range []string{"s3a://", "s3p://"} {
		if rest, ok := strings.CutPrefix(p, alias); ok {
			out = append(out, "s3://"+rest)
		}
	}
	return out
}

// checkPathMap refuses a --path-map rule that can take no effect: one whose OLD (without its
// scheme) occurs nowhere in _metadata, so that no absolute state-file path starts with it. A
// path is a plain string in _metadata (Java's modified UTF-8, the same bytes as UTF-8 for text
// without NUL or characters beyond the BMP), so the test is a byte search; a rule it cannot
// judge (such characters) is let through.
func (s *Savepoint) checkPathMap() error {
	for _, m := range s.opt.PathMap {
		core := m.Old
		if i := strings.Index(core, "://"); i >= 0 {
			core = core[i+3:]
		} else if rest, ok := strings.CutPrefix(core, "file:"); ok {
			core = rest
		}
		core = strings.TrimLeft(core, "/")
		if core == "" || strings.ContainsFunc(core, func(r rune) bool { return r == 0 || r > 0xFFFF }) {
			continue
		}
		if !bytes.Contains(s.metaBytes, []byte(core)) {
			return fmt.Errorf("--path-map %s=%s: no absolute state-file path in %s starts with %s (its handles are relative or name other places; see 'savepoint inspect --subtasks')", m.Old, m.New, s.MetadataPath, m.Old)
		}
	}
	return nil
}

// elsewhere opens (once per directory) the store holding loc and names the file in it.
func (s *Savepoint) elsewhere(loc storage.Location) (target, error) {
	dir, base := loc.Dir()
	if storage.CheckName(base) != nil {
		return target{}, fmt.Errorf("%s: state file %s: not a file name", s.MetadataPath, loc)
	}
	if rel, ok := s.inside(loc); ok {
		return target{store: s.Store, name: rel}, nil
	}
	key := dir.String()
	if st, ok := s.others[key]; ok {
		return target{store: st, name: base}, nil
	}
	st, err := storage.Open(context.Background(), dir)
	if err != nil {
		return target{}, fmt.Errorf("%s: state file %s: %w", s.MetadataPath, loc, err)
	}
	if s.others == nil {
		s.others = map[string]storage.Store{}
	}
	s.others[key] = st
	return target{store: st, name: base}, nil
}

// inside reports whether loc lies in the savepoint directory, and its name there.
func (s *Savepoint) inside(loc storage.Location) (string, bool) {
	home := s.Store.Location()
	if loc.Kind != home.Kind {
		return "", false
	}
	if loc.Kind == storage.Local {
		for _, dir := range []string{home.Path, s.realDir} {
			if dir == "" {
				continue
			}
			if r, err := filepath.Rel(dir, loc.Path); err == nil && filepath.IsLocal(r) {
				return filepath.ToSlash(r), true
			}
		}
		return "", false
	}
	if loc.Bucket != home.Bucket || loc.Account != home.Account {
		return "", false
	}
	prefix := home.Key + "/"
	if home.Key == "" {
		prefix = ""
	}
	rel, ok := strings.CutPrefix(loc.Key, prefix)
	return rel, ok && storage.CheckName(rel) == nil
}

// absLocation parses an absolute path or URI as Flink writes it into _metadata.
func absLocation(p string) (storage.Location, error) {
	loc, err := storage.Parse(p)
	if err != nil {
		return loc, err
	}
	if loc.Kind == storage.Local && !filepath.IsAbs(loc.Path) {
		return loc, errors.New("want an absolute path")
	}
	return loc, nil
}

// baseName is the last element of a path or URI.
func baseName(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	b := path.Base(p)
	if b == "." || b == "/" {
		return ""
	}
	return b
}

// Package safeio writes files so that a crash never leaves a half-written result: data goes to
// a temporary name in the same directory, is fsynced, and is renamed over the target; the
// directory is fsynced after the rename. A reader sees either the old file or the new one.
package safeio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TempPrefix starts the name of every temporary file statecraft creates, so that leftovers of a
// killed run can be recognised (and removed) by a later one.
const TempPrefix = ".statecraft-tmp-"

// WriteFile atomically replaces path with data. When path exists its permission bits are kept;
// otherwise perm is used. When path is a symbolic link the file it points to is replaced (in
// that file's own directory) and the link is kept, as editors and sed -i --follow-symlinks do:
// replacing the link would leave the real file unchanged.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	if path, err = followLinks(path); err != nil {
		return err
	}
	if st, statErr := os.Stat(path); statErr == nil {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("write %s: not a regular file", path)
		}
		perm = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(dir)
}

// maxLinks bounds a chain of symbolic links, as the kernel's ELOOP limit does.
const maxLinks = 40

// followLinks returns the path a chain of symbolic links at path ends in; the end need not
// exist (a dangling link is written through, creating its target).
func followLinks(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", fmt.Errorf("write %s: more than %d symbolic links in a chain", path, maxLinks)
}

// SyncDir fsyncs a directory so that a rename or create inside it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// IsTemp reports whether name (a base name) is a temporary file left by statecraft.
func IsTemp(name string) bool { return strings.HasPrefix(name, TempPrefix) }

package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go/compress"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/internal/safeio"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/stateparquet"
)

// parquetTarget is one state's output file: written under a temporary name in its directory,
// renamed when the whole export has succeeded (no partial output).
type parquetTarget struct {
	path string
	tmp  *os.File
	buf  *bufio.Writer
	w    *stateparquet.Writer
}

// dumpParquet writes the keyed states (and timers) of op, or the one named state, as Parquet:
// to out as a file when one state is written, or to out/<state>.parquet when out is a directory
// (existing, or named with a trailing slash), its pages compressed with codec. It reports the
// files written and their rows.
func dumpParquet(sp *savepoint.Savepoint, op *metadata.OperatorState, state, out string, codec compress.Codec, report func(string)) error {
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		return err
	}
	defer closeAll()
	var names []string
	decoders := map[string]*keyed.StateDecoder{}
	keys := map[string]*keyed.Subtask{}
	for _, s := range subs {
		for _, sd := range s.Decoder.States {
			n := sd.Meta.Name
			if decoders[n] == nil && (state == "" || n == state) {
				decoders[n], keys[n] = sd, s
				names = append(names, n)
			}
		}
	}
	all := stateNames(sp, op)
	if len(names) == 0 {
		switch {
		case state == "" && len(all) == 0:
			return fmt.Errorf("operator %s has no state", opLabel(op))
		case state == "":
			return fmt.Errorf("operator %s has no keyed state (it has operator state %s); Parquet export covers keyed state and timers: use --format jsonl", opLabel(op), strings.Join(all, ", "))
		case slices.Contains(all, state):
			return fmt.Errorf("--state %q is operator state of %s; Parquet export covers keyed state and timers: use --format jsonl", state, opLabel(op))
		default:
			return fmt.Errorf("--state %q: operator %s has no state of that name (it has %s)", state, opLabel(op), strings.Join(all, ", "))
		}
	}
	dirMode := strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator))
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		dirMode = true
	}
	if !dirMode && len(names) > 1 {
		return fmt.Errorf("-o %s: operator %s has %s (%s): give --state NAME for one file, or -o DIR/ for one file per state",
			out, opLabel(op), english.Count(len(names), "keyed state"), strings.Join(names, ", "))
	}
	if dirMode {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return fmt.Errorf("-o %s: %w", out, err)
		}
	} else if st, err := os.Stat(filepath.Dir(out)); err != nil || !st.IsDir() {
		return fmt.Errorf("-o %s: directory %s does not exist", out, filepath.Dir(out))
	}
	targets := map[string]*parquetTarget{}
	var order []*parquetTarget
	defer func() {
		for _, t := range order {
			if t.w != nil {
				t.w.Discard()
			}
			if t.tmp != nil {
				t.tmp.Close()
				os.Remove(t.tmp.Name())
			}
		}
	}()
	files := map[string]string{}
	for _, n := range names {
		path := out
		if dirMode {
			path = filepath.Join(out, parquetFileName(n))
			if other, dup := files[path]; dup {
				return fmt.Errorf("states %q and %q would both be written to %s", other, n, path)
			}
			files[path] = n
		}
		f, err := os.CreateTemp(filepath.Dir(path), safeio.TempPrefix+filepath.Base(path)+"-*")
		if err != nil {
			return fmt.Errorf("-o %s: %w", path, err)
		}
		t := &parquetTarget{path: path, tmp: f, buf: bufio.NewWriterSize(f, 1<<20)}
		order = append(order, t)
		// CreateTemp makes the file 0600; the export is for other programs (and users) to read,
		// as every file statecraft writes is 0644, or keeps the mode of the file it replaces.
		perm := os.FileMode(0o644)
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			perm = st.Mode().Perm()
		}
		if err := f.Chmod(perm); err != nil {
			return fmt.Errorf("write %s: %w", f.Name(), err)
		}
		t.w = stateparquet.NewWriter(t.buf, keys[n].Header.KeySerializer, decoders[n], codec)
		targets[n] = t
	}
	for _, s := range subs {
		err := s.Records(func(n string) bool { return targets[n] != nil }, func(r keyed.Record) error {
			return targets[r.State].w.Write(&r)
		})
		if err != nil {
			return err
		}
	}
	for _, t := range order {
		if err := t.w.Close(); err != nil {
			return err
		}
		if err := t.buf.Flush(); err != nil {
			return fmt.Errorf("write %s: %w", t.tmp.Name(), err)
		}
		if err := t.tmp.Sync(); err != nil {
			return fmt.Errorf("write %s: fsync: %w", t.tmp.Name(), err)
		}
		if err := t.tmp.Close(); err != nil {
			return fmt.Errorf("write %s: %w", t.tmp.Name(), err)
		}
	}
	// Every file is complete: only now do they take their names.
	for _, t := range order {
		if err := os.Rename(t.tmp.Name(), t.path); err != nil {
			return fmt.Errorf("write %s: %w", t.path, err)
		}
		t.tmp = nil
		if err := safeio.SyncDir(filepath.Dir(t.path)); err != nil {
			return err
		}
		report(fmt.Sprintf("wrote %s (%s)", t.path, english.Count(int(t.w.Rows()), "row")))
	}
	if state == "" {
		for _, n := range all {
			if decoders[n] == nil {
				report(fmt.Sprintf("note: operator state %s not written: Parquet export covers keyed state and timers (--format jsonl has it)", n))
			}
		}
	}
	return nil
}

// parquetFileName is a state's file name: the name with every character outside
// [A-Za-z0-9._-] replaced by '_' (timer states are named "_timer_state/event_...").
func parquetFileName(state string) string {
	b := []byte(state)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b) + ".parquet"
}

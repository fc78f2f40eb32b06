package migrate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/storage"
)

// A native RocksDB snapshot (a native savepoint, or a retained incremental checkpoint whose
// shared files live outside its chk-N directory) is a source like any other: the run first
// converts it into a canonical savepoint in a scratch directory beside DST (or in the system's
// temporary directory for an object-store DST), verified like any run, and then applies the
// steps to that, so that every step reads and writes canonical keyed state only and DST is
// always canonical:
//
//	SRC (native) --Convert--> DST.statecraft-canonical-XXXX/canonical --steps--> DST
//
// Unchanged files of the scratch copy are hard-linked into DST where the file system allows,
// so the detour costs one write of the keyed state. The scratch directory is removed at the
// end, whatever happens.

// canonicalInfix names the scratch directory of a native source's conversion.
const canonicalInfix = ".statecraft-canonical-"

// needsConversion reports whether the steps must run on a canonical copy of m: some operator
// holds native keyed state and the run does not start by converting it.
func needsConversion(m *metadata.Metadata, steps []Step) bool {
	if _, ok := steps[0].(*Convert); ok {
		return false
	}
	for _, op := range m.Operators {
		if nativeKeyed(op) {
			return true
		}
	}
	return false
}

// runConverted converts the native source src into a scratch canonical savepoint, runs steps on
// it into dst, and reports both as one run from src.
func runConverted(src, dst string, dstLoc storage.Location, steps []Step, opt Options) (*Report, error) {
	parent := os.TempDir()
	base := "statecraft"
	if dstLoc.Kind == storage.Local {
		abs, err := filepath.Abs(dstLoc.Path)
		if err != nil {
			return nil, err
		}
		parent, base = filepath.Dir(abs), filepath.Base(abs)
	}
	if opt.Notes != nil && dstLoc.Kind == storage.Local {
		ents, _ := os.ReadDir(parent)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), base+canonicalInfix) {
				fmt.Fprintf(opt.Notes, "note: %s is left over from an interrupted run; it is not used and can be removed\n", filepath.Join(parent, e.Name()))
			}
		}
	}
	scratch, err := os.MkdirTemp(parent, base+canonicalInfix)
	if err != nil {
		return nil, fmt.Errorf("create a scratch directory for the canonical copy of the native source: %w", err)
	}
	defer os.RemoveAll(scratch)
	canonical := filepath.Join(scratch, "canonical")
	if opt.Notes != nil {
		fmt.Fprintf(opt.Notes, "statecraft: %s holds native RocksDB keyed state: converting it to canonical first (in %s)\n", src, scratch)
	}
	first := opt
	first.DryRun, first.CleanPartial = false, false
	conv, err := Run(src, canonical, []Step{&Convert{}}, first)
	if err != nil {
		return nil, fmt.Errorf("convert the native source to canonical: %w", err)
	}
	// The scratch copy is self-contained (relative handles): the source's --path-map rules
	// were applied by the conversion and name nothing in it.
	second := opt
	second.PathMap = nil
	rep, err := Run(canonical, dst, steps, second)
	if rep != nil {
		rep.Source = conv.Source
		rep.Steps = append(conv.Steps, rep.Steps...)
	}
	return rep, err
}

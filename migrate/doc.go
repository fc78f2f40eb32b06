// Package migrate writes a migrated copy of a Flink savepoint. The source is never modified.
//
// Steps (each a Step; scripts of them are described on ParseScript):
//
//	RenameUIDs    new UIDs (operator id recomputed as Flink does; name kept; no file rewritten)
//	Rescale       new max parallelism and parallelism of keyed operators (keys regrouped by their
//	              Java hashCode; operator state carried over; a parallelism change is refused for
//	              operators that also hold operator state)
//	Retype        new value type (value, list, map state; or one field of a tuple value) and/or
//	              map key type, between Java's boxed primitives, and from String; or fields
//	              added to and dropped from Row and POJO values (and a POJO's class renamed)
//	RenameState   DropState   keyed states
//	DropOperator  an operator and everything it holds
//
// A source with keyed state in RocksDB's native format (a native savepoint, an incremental
// checkpoint) is converted to canonical first, into a scratch directory (native.go); every step
// then works on canonical state and the output is canonical.
//
// Not supported: keyed state of the changelog backend (except for UID changes and dropping
// operators, which never read it), raw keyed/operator state, renaming or
// retyping operator (non-keyed) state, field changes of POJO values that are subclass instances
// or of Rows and POJOs nested inside other types, key types whose hashCode() is user code (POJOs,
// generic types) in a rescale.
//
// # How a run writes its output
//
// A run is a list of steps applied in order to a working copy of the source's _metadata. Steps
// that change keyed state (rescale) write new state files; everything else is metadata only.
//
//	SRC/                              DST.statecraft-tmp-XXXX/  (sibling of DST, made by the run)
//	  _metadata ---decode---> working   .spill/               spill files of a large rescale
//	  a1b2...   (state file)  metadata  a1b2...   hard link (or copy) of an unchanged file
//	  c3d4...                    |      9f8e...   new keyed-state file written by a rescale
//	                             |      _metadata written last: temp name, fsync, rename
//	                             v
//	          verify: re-read the staging directory, compare per-state counts and checksums
//	                  with the source transformed as promised; on a mismatch remove it
//	                  (UID renames only: _metadata and file identity instead, see verify.go)
//	                             v
//	          rename DST.statecraft-tmp-XXXX -> DST (DST must not exist, or be an empty dir)
//
// DST therefore appears complete or not at all. A killed run leaves only a directory named
// DST.statecraft-tmp-XXXX (never DST itself); the next run uses a fresh name, so a leftover
// never blocks it, and the run warns about leftovers it sees so that they can be removed.
//
// The output is self-contained: every state file it references is inside DST and referenced by
// a relative handle (tag 6). Absolute file handles (tag 2) that pointed into the source become
// relative; inline state (tag 1) stays inline. Unchanged files are hard-linked when DST is on
// the same file system as SRC (Flink never writes to a finished savepoint's files), copied
// otherwise or with LinkCopy.
//
// # Verification
//
// Before the rename, the staging directory is opened like any savepoint and, per operator and
// per state, the number of entries and an order-independent checksum (the sum of XXH3-64 hashes
// of each entry's key without its key-group prefix and its value, see entryHash; of each
// operator-state element's bytes) are compared with the source's, transformed as the steps
// promise (a renamed operator keeps its sums under its new id; a rescale keeps every sum,
// because only key-group prefixes and the placement of entries change; a dropped state or
// operator disappears). The source's sums are taken before the first step, except for the
// operators a first rescale reads in full anyway: its split path sums their entries as it
// reads them, and anything it leaves unsummed is summed from the source right after it.
package migrate

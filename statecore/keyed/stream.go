package keyed

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Streaming key groups: WriteKeyGroup assembles a whole block in memory, which for a hot key
// (millions of map entries under one key) is hundreds of MiB. BeginKeyGroup, Add and
// EndKeyGroup write the same block entry by entry, holding one entry back:
//
//	Add(e1 s0) Add(e2 s0) Add(e3 s1)               EndKeyGroup()
//	   |          |          |                          |
//	   v          v          v                          v
//	+----+     +------+   +-----------+-----+        +-------------+--------+
//	| s0 |     | e1   |   | e2|0x80   | s1  |        | e3|0x80     | FFFF   |
//	+----+     +------+   +-----------+-----+        +-------------+--------+
//	first id   previous   previous entry flagged     last entry flagged,
//	           entry out  (state changes), next id   end-of-key-group mark
//
// An entry can only be written once the next one's state id is known (the metadata-follows
// bit sits on its key's first byte), hence the one entry of lookahead. The bytes are exactly
// WriteKeyGroup's for the same entries as long as each state's entries come in one run, as
// they do in every block Flink writes (it writes a key group state by state). WriteKeyGroup
// would regroup a state that comes back after another; a stream cannot, so Add refuses it
// rather than write a block with two runs of one state.

// BeginKeyGroup starts a streamed key-group block. Nothing is written until the first Add, so
// a key group that receives no entry leaves no bytes (Flink cannot read an empty block).
func (w *Writer) BeginKeyGroup(kg int) error {
	if w.streaming {
		return fmt.Errorf("keyed writer: key group %d begun while key group %d is open", kg, w.skg)
	}
	w.streaming, w.skg, w.sn, w.pending = true, kg, 0, false
	w.seen = w.seen[:0]
	return nil
}

// Add appends one entry (key with its key-group prefix, metadata-follows bit clear) of state
// sid to the open key group. key and value are copied: the caller may reuse them.
func (w *Writer) Add(sid int, key, value []byte) error {
	if !w.streaming {
		return fmt.Errorf("keyed writer: Add outside BeginKeyGroup/EndKeyGroup")
	}
	if len(key) == 0 {
		return fmt.Errorf("keyed writer: key group %d state %d: empty key", w.skg, sid)
	}
	if sid < 0 || sid >= EndOfKeyGroup {
		return fmt.Errorf("keyed writer: key group %d: state id %d out of range [0, %d)", w.skg, sid, EndOfKeyGroup)
	}
	if w.sn == 0 {
		// The block's first bytes: its offset is where the output stands now.
		w.soff = w.w.n
		w.sout = io.Writer(w.w)
		if w.compressed {
			w.framer = NewSnappyFramer(w.w)
			w.sout = w.framer
		}
		if err := w.put(binary.BigEndian.AppendUint16(w.scratch[:0], uint16(sid))); err != nil {
			return err
		}
		w.seen = append(w.seen, sid)
	} else if sid != w.psid {
		for _, s := range w.seen {
			if s == sid {
				return fmt.Errorf("keyed writer: key group %d: state %d comes back after state %d (a streamed block holds each state in one run)", w.skg, sid, w.psid)
			}
		}
		if err := w.flushPending(true); err != nil {
			return err
		}
		if err := w.put(binary.BigEndian.AppendUint16(w.scratch[:0], uint16(sid))); err != nil {
			return err
		}
		w.seen = append(w.seen, sid)
	} else if err := w.flushPending(false); err != nil {
		return err
	}
	w.pkey = append(w.pkey[:0], key...)
	w.pval = append(w.pval[:0], value...)
	w.psid, w.pending = sid, true
	w.sn++
	return nil
}

// EndKeyGroup closes the open key group: the held entry is written flagged, then the
// end-of-key-group mark. It returns the block's offset and its entry count; both are 0 when no
// entry was added (nothing was written: leave the key group's offset 0).
func (w *Writer) EndKeyGroup() (off int64, n int, err error) {
	if !w.streaming {
		return 0, 0, fmt.Errorf("keyed writer: EndKeyGroup without BeginKeyGroup")
	}
	w.streaming = false
	if w.sn == 0 {
		return 0, 0, nil
	}
	if err := w.flushPending(true); err != nil {
		return 0, 0, err
	}
	if err := w.put(binary.BigEndian.AppendUint16(w.scratch[:0], EndOfKeyGroup)); err != nil {
		return 0, 0, err
	}
	if w.framer != nil {
		if err := w.framer.Flush(); err != nil {
			return 0, 0, err
		}
		w.framer = nil
	}
	return w.soff, w.sn, nil
}

// flushPending writes the held entry, with the metadata-follows bit when last.
func (w *Writer) flushPending(last bool) error {
	if !w.pending {
		return nil
	}
	w.pending = false
	buf := appendEntry(w.scratch[:0], w.pkey, w.pval, last)
	w.scratch = buf[:0]
	return w.put(buf)
}

func (w *Writer) put(p []byte) error {
	if _, err := w.sout.Write(p); err != nil {
		return fmt.Errorf("keyed writer: key group %d: %w", w.skg, err)
	}
	return nil
}

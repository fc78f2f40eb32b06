package keyed

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// BlockBuilder assembles one key group's block as entries arrive, straight in the block's
// bytes, so that a caller that routes entries into several new key groups (a rescale) copies
// each entry once, instead of gathering Entry values and having WriteKeyGroup copy them again:
//
//	AddPrefixed(s0 e1) AddPrefixed(s0 e2) AddPrefixed(s1 e3)          WriteBlock
//	+----+------+      +------+            +-----+------+          +------+------+
//	| s0 | e1   |  ->  | e2   |   ->       | s1  | e3   |    ->    | e3   | FFFF |
//	+----+------+      +------+            +-----+------+          | 0x80 |      |
//	                   (appended)          e2's key flagged 0x80    +------+------+
//	                                       (its run ended), s1      last entry flagged, end mark
//
// The bytes are WriteKeyGroup's for the same entries: states in order of first appearance, each
// state's entries in the order added, the last of each run flagged. Entries of a Flink block
// come in one run per state, and so do any subset of them; should a state come back after
// another, the block is regrouped when written, as WriteKeyGroup would group it.
type BlockBuilder struct {
	buf     []byte
	n       int   // entries added
	sid     int   // state of the open run
	last    int   // offset in buf of the first key byte of the last entry added
	started []int // states whose runs have begun, in order
	regroup bool  // a state's run began again after another's
}

// Reset empties the builder, keeping its buffers.
func (b *BlockBuilder) Reset() {
	b.buf, b.n, b.started, b.regroup = b.buf[:0], 0, b.started[:0], false
}

// Len is the number of entries added since the last Reset.
func (b *BlockBuilder) Len() int { return b.n }

// AddPrefixed appends an entry of state sid whose key is key group kg's prefixLen-byte (1 or 2,
// PrefixLen) big-endian prefix followed by rest, the key's bytes past its prefix. rest and value
// are copied.
func (b *BlockBuilder) AddPrefixed(sid, kg, prefixLen int, rest, value []byte) {
	b.begin(sid)
	b.buf = binary.BigEndian.AppendUint32(b.buf, uint32(prefixLen+len(rest)))
	b.last = len(b.buf)
	if prefixLen == 2 {
		b.buf = append(b.buf, byte(kg>>8), byte(kg))
	} else {
		b.buf = append(b.buf, byte(kg))
	}
	b.buf = append(b.buf, rest...)
	b.buf = binary.BigEndian.AppendUint32(b.buf, uint32(len(value)))
	b.buf = append(b.buf, value...)
	b.n++
}

// AddRun appends n entries of state sid given as the bytes a block holds for them, their keys'
// metadata-follows bits clear: per entry u32 key length, key (prefix included, never empty),
// u32 value length, value; last is the offset in run of the last entry's first key byte.
// Copied in one piece.
func (b *BlockBuilder) AddRun(sid int, run []byte, last, n int) {
	b.begin(sid)
	b.last = len(b.buf) + last
	b.buf = append(b.buf, run...)
	b.n += n
}

// begin opens a run of state sid unless it is the open one, flagging the run before's last entry.
func (b *BlockBuilder) begin(sid int) {
	if b.n > 0 && sid == b.sid {
		return
	}
	if b.n > 0 {
		b.buf[b.last] |= metaFollows
	}
	if slices.Contains(b.started, sid) {
		b.regroup = true
	} else {
		b.started = append(b.started, sid)
	}
	b.buf = binary.BigEndian.AppendUint16(b.buf, uint16(sid))
	b.sid = sid
}

// finish completes the block (last entry flagged, end mark) and returns its bytes; the builder
// must be Reset before it is used again.
func (b *BlockBuilder) finish() ([]byte, error) {
	b.buf[b.last] |= metaFollows
	if !b.regroup {
		b.buf = binary.BigEndian.AppendUint16(b.buf, EndOfKeyGroup)
		return b.buf, nil
	}
	// Rare: read the runs back as entries (keys unflagged) and lay them out as WriteKeyGroup does.
	entries := make([]Entry, 0, b.n)
	for p := 0; p < len(b.buf); {
		sid := int(binary.BigEndian.Uint16(b.buf[p:]))
		p += 2
		for {
			kl := int(binary.BigEndian.Uint32(b.buf[p:]))
			key := b.buf[p+4 : p+4+kl]
			p += 4 + kl
			vl := int(binary.BigEndian.Uint32(b.buf[p:]))
			value := b.buf[p+4 : p+4+vl]
			p += 4 + vl
			lastOfRun := key[0]&metaFollows != 0
			key[0] &^= metaFollows
			entries = append(entries, Entry{StateID: sid, Key: key, Value: value})
			if lastOfRun {
				break
			}
		}
	}
	out, _, err := appendBlock(nil, entries, nil)
	if err != nil {
		return nil, err
	}
	b.buf = out
	return out, nil
}

// WriteBlock writes the builder's block, as WriteKeyGroup writes a block, and returns its
// offset. The builder must hold at least one entry; Reset it before adding the next block's.
func (w *Writer) WriteBlock(b *BlockBuilder) (int64, error) {
	if w.streaming {
		return 0, fmt.Errorf("keyed writer: WriteBlock while streamed key group %d is open", w.skg)
	}
	if b.n == 0 {
		return 0, fmt.Errorf("keyed writer: empty key group (Flink cannot read an empty block; leave its offset 0)")
	}
	raw, err := b.finish()
	if err != nil {
		return 0, err
	}
	return w.emit(raw)
}

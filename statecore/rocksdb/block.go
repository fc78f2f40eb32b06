package rocksdb

import (
	"encoding/binary"
	"fmt"
)

// blockIter walks the entries of one uncompressed block in order (the layout is in the package
// doc). Keys are rebuilt into a buffer the iterator owns: Key is valid until the next call to next.
// With deltaHandles the block is an index block whose values are (delta-encoded) block handles.
type blockIter struct {
	data         []byte // entries only (restart array cut off)
	pos          int
	key          []byte
	value        []byte
	deltaHandles bool
	handle       blockHandle // deltaHandles: the current entry's handle
	shared       bool        // deltaHandles: the current entry's key shares bytes with the previous
	err          error
	what         string // for errors, e.g. "table.sst: data block at offset 123"
}

// newBlockIter checks the restart array of b and returns an iterator over its entries.
func newBlockIter(b []byte, what string, deltaHandles bool) (*blockIter, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%s: %d bytes, too short for a restart count", what, len(b))
	}
	raw := binary.LittleEndian.Uint32(b[len(b)-4:])
	if raw&(1<<31) != 0 {
		return nil, fmt.Errorf("%s: data block hash index (kDataBlockBinaryAndHash) is not supported", what)
	}
	n := uint64(raw)
	if n == 0 {
		return nil, fmt.Errorf("%s: restart count 0 (a block has at least one restart point)", what)
	}
	if n*4+4 > uint64(len(b)) {
		return nil, fmt.Errorf("%s: restart count %d needs %d bytes, block has %d", what, n, n*4+4, len(b))
	}
	end := len(b) - 4 - int(n)*4
	for i := 0; i < int(n); i++ {
		off := binary.LittleEndian.Uint32(b[end+4*i:])
		if int64(off) > int64(end) {
			return nil, fmt.Errorf("%s: restart point %d at offset %d is outside the %d bytes of entries", what, i, off, end)
		}
	}
	return &blockIter{data: b[:end], what: what, deltaHandles: deltaHandles}, nil
}

func (it *blockIter) fail(format string, args ...any) bool {
	it.err = fmt.Errorf("%s: entry at offset %d: %s", it.what, it.pos, fmt.Sprintf(format, args...))
	return false
}

// next moves to the next entry; false at the end or on error (see err).
func (it *blockIter) next() bool {
	if it.err != nil || it.pos >= len(it.data) {
		return false
	}
	p := it.data[it.pos:]
	shared, a := binary.Uvarint(p)
	if a <= 0 || shared > 1<<31 {
		return it.fail("bad shared-length varint")
	}
	nonShared, b := binary.Uvarint(p[a:])
	if b <= 0 || nonShared > 1<<31 {
		return it.fail("bad key-length varint")
	}
	h := a + b
	var valueLen uint64
	if !it.deltaHandles {
		var c int
		valueLen, c = binary.Uvarint(p[h:])
		if c <= 0 || valueLen > 1<<31 {
			return it.fail("bad value-length varint")
		}
		h += c
	}
	if shared > uint64(len(it.key)) {
		return it.fail("shares %d bytes with a previous key of %d bytes", shared, len(it.key))
	}
	if nonShared > uint64(len(p)-h) {
		return it.fail("key of %d bytes runs past the block's entries", nonShared)
	}
	it.key = append(it.key[:shared], p[h:h+int(nonShared)]...)
	h += int(nonShared)
	if it.deltaHandles {
		rest := p[h:]
		if shared == 0 {
			hd, r, err := decodeHandle(rest)
			if err != nil {
				return it.fail("index value: %v", err)
			}
			it.handle, rest = hd, r
		} else {
			delta, n := binary.Varint(rest)
			if n <= 0 {
				return it.fail("index value: bad size-delta varint")
			}
			prev := it.handle
			it.handle = blockHandle{offset: prev.offset + prev.size + trailerSize, size: uint64(int64(prev.size) + delta)}
			rest = rest[n:]
		}
		it.shared = shared != 0
		it.value = p[h : len(p)-len(rest)]
		it.pos += len(p) - len(rest)
		return true
	}
	if valueLen > uint64(len(p)-h) {
		return it.fail("value of %d bytes runs past the block's entries", valueLen)
	}
	it.value = p[h : h+int(valueLen)]
	it.pos += h + int(valueLen)
	return true
}

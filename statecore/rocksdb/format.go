package rocksdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/zeebo/xxh3"
)

const (
	tableMagic       = 0x88e241b785f4cff7 // block-based table, footer of format version >= 1
	legacyTableMagic = 0xdb4775248b80fb57 // block-based table, LevelDB-compatible footer
	footerSize       = 53
	trailerSize      = 5 // u8 compression type + u32le checksum after every block

	// MaxBlockSize bounds one block, stored or uncompressed, so that a hostile length field cannot
	// make the reader allocate more. Flink's tables use 4 KiB blocks; one block holds a single
	// large value at most a few MiB in practice.
	MaxBlockSize = 64 << 20
)

// Checksum types of the footer.
const (
	checksumNone     = 0
	checksumCRC32c   = 1
	checksumXXHash   = 2
	checksumXXHash64 = 3
	checksumXXH3     = 4
)

func checksumName(t byte) string {
	switch t {
	case checksumNone:
		return "none"
	case checksumCRC32c:
		return "CRC32c"
	case checksumXXHash:
		return "xxHash32"
	case checksumXXHash64:
		return "xxHash64"
	case checksumXXH3:
		return "XXH3"
	}
	return fmt.Sprintf("unknown checksum type %d", t)
}

// Compression types of block trailers.
const (
	compressionNone   = 0
	compressionSnappy = 1
	compressionZlib   = 2
	compressionBZip2  = 3
	compressionLZ4    = 4
	compressionLZ4HC  = 5
	compressionXpress = 6
	compressionZSTD   = 7
)

func compressionName(t byte) string {
	switch t {
	case compressionNone:
		return "none"
	case compressionSnappy:
		return "Snappy"
	case compressionZlib:
		return "zlib"
	case compressionBZip2:
		return "bzip2"
	case compressionLZ4:
		return "LZ4"
	case compressionLZ4HC:
		return "LZ4HC"
	case compressionXpress:
		return "Xpress"
	case compressionZSTD:
		return "ZSTD"
	case 0x40:
		return "ZSTDNotFinal"
	}
	return fmt.Sprintf("unknown compression type %d", t)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskCRC is RocksDB's (and LevelDB's) masking of stored CRCs: a CRC over data that embeds CRCs
// would otherwise be degenerate.
func maskCRC(c uint32) uint32 { return ((c >> 15) | (c << 17)) + 0xa282ead8 }

// blockHandle locates a block (without its trailer) in a table file.
type blockHandle struct {
	offset, size uint64
}

// decodeHandle reads a handle from b and returns the rest.
func decodeHandle(b []byte) (blockHandle, []byte, error) {
	off, n := binary.Uvarint(b)
	if n <= 0 {
		return blockHandle{}, nil, errors.New("bad block handle offset varint")
	}
	size, m := binary.Uvarint(b[n:])
	if m <= 0 {
		return blockHandle{}, nil, errors.New("bad block handle size varint")
	}
	return blockHandle{off, size}, b[n+m:], nil
}

// footer is the fixed tail of a table.
type footer struct {
	checksum      byte
	metaindex     blockHandle
	index         blockHandle
	formatVersion uint32
}

func readFooter(r io.ReaderAt, size int64, name string) (footer, error) {
	if size < footerSize {
		return footer{}, fmt.Errorf("%s: %d bytes, too short for a table footer (%d bytes)", name, size, footerSize)
	}
	b := make([]byte, footerSize)
	if _, err := r.ReadAt(b, size-footerSize); err != nil {
		return footer{}, fmt.Errorf("%s: reading footer at offset %d: %w", name, size-footerSize, err)
	}
	magic := binary.LittleEndian.Uint64(b[footerSize-8:])
	switch magic {
	case tableMagic:
	case legacyTableMagic:
		return footer{}, fmt.Errorf("%s: legacy (format version 0) block-based table footer is not supported", name)
	default:
		return footer{}, fmt.Errorf("%s: offset %d: magic %#016x is not a block-based table's (%#016x); plain and cuckoo tables are not supported",
			name, size-8, magic, uint64(tableMagic))
	}
	f := footer{checksum: b[0], formatVersion: binary.LittleEndian.Uint32(b[footerSize-12:])}
	if f.formatVersion < 2 || f.formatVersion > 5 {
		return footer{}, fmt.Errorf("%s: offset %d: table format version %d is not supported (2 to 5 are)", name, size-12, f.formatVersion)
	}
	switch f.checksum {
	case checksumCRC32c, checksumXXH3:
	default:
		return footer{}, fmt.Errorf("%s: offset %d: %s block checksums are not supported (CRC32c and XXH3 are)",
			name, size-footerSize, checksumName(f.checksum))
	}
	rest := b[1 : footerSize-12]
	var err error
	if f.metaindex, rest, err = decodeHandle(rest); err != nil {
		return footer{}, fmt.Errorf("%s: footer metaindex handle: %w", name, err)
	}
	if f.index, _, err = decodeHandle(rest); err != nil {
		return footer{}, fmt.Errorf("%s: footer index handle: %w", name, err)
	}
	return f, nil
}

// blockBuf is the memory of one block, reused from block to block by an iterator that holds one
// block at a time: the bytes read (block and trailer) and the uncompressed contents. A scan then
// allocates nothing per block once the buffers have grown to the largest block.
type blockBuf struct{ raw, plain []byte }

// grow returns b[:n], reusing b's memory when it is large enough.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}

// readBlock reads the block at h with its trailer, verifies the checksum and returns the
// uncompressed contents. With bb the result lives in bb's buffers (valid until the next read
// into bb); without, it is freshly allocated.
func readBlock(r io.ReaderAt, fileSize int64, name string, checksum byte, h blockHandle, what string, bb *blockBuf) ([]byte, error) {
	if h.size > MaxBlockSize {
		return nil, fmt.Errorf("%s: %s block at offset %d: size %d exceeds the %d-byte limit", name, what, h.offset, h.size, MaxBlockSize)
	}
	end := h.offset + h.size + trailerSize
	if end < h.offset || end > uint64(fileSize) {
		return nil, fmt.Errorf("%s: %s block at offset %d, %d bytes plus trailer, runs past the end of the file (%d bytes)",
			name, what, h.offset, h.size, fileSize)
	}
	var buf, dst []byte
	if bb != nil {
		bb.raw = grow(bb.raw, int(h.size+trailerSize))
		buf, dst = bb.raw, bb.plain
	} else {
		buf = make([]byte, h.size+trailerSize)
	}
	if _, err := r.ReadAt(buf, int64(h.offset)); err != nil {
		return nil, fmt.Errorf("%s: reading %s block at offset %d: %w", name, what, h.offset, err)
	}
	data, ctype := buf[:h.size], buf[h.size]
	stored := binary.LittleEndian.Uint32(buf[h.size+1:])
	var got uint32
	switch checksum {
	case checksumCRC32c:
		got = maskCRC(crc32.Update(crc32.Checksum(data, castagnoli), castagnoli, buf[h.size:h.size+1]))
	case checksumXXH3:
		got = uint32(xxh3.Hash(data)) ^ uint32(ctype)*0x6b9083d9
	}
	if got != stored {
		return nil, fmt.Errorf("%s: %s block at offset %d: %s checksum mismatch (stored %#08x, computed %#08x)",
			name, what, h.offset, checksumName(checksum), stored, got)
	}
	out, err := decompress(ctype, data, dst)
	if err != nil {
		return nil, fmt.Errorf("%s: %s block at offset %d: %w", name, what, h.offset, err)
	}
	if bb != nil && ctype != compressionNone {
		bb.plain = out
	}
	return out, nil
}

var zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxBlockSize))

// decompress undoes a block's compression into dst's memory when it is large enough. Every codec
// but Snappy (which records its own length) is preceded by a varint32 of the uncompressed size in
// format versions >= 2.
func decompress(ctype byte, data, dst []byte) ([]byte, error) {
	switch ctype {
	case compressionNone:
		return data, nil
	case compressionSnappy:
		n, err := snappy.DecodedLen(data)
		if err != nil {
			return nil, fmt.Errorf("Snappy: %w", err)
		}
		if n > MaxBlockSize {
			return nil, fmt.Errorf("Snappy: uncompressed size %d exceeds the %d-byte limit", n, MaxBlockSize)
		}
		out, err := snappy.Decode(grow(dst, n), data)
		if err != nil {
			return nil, fmt.Errorf("Snappy: %w", err)
		}
		return out, nil
	case compressionLZ4, compressionLZ4HC, compressionZSTD:
		n, k := binary.Uvarint(data)
		if k <= 0 || n > MaxBlockSize {
			return nil, fmt.Errorf("%s: bad uncompressed-size prefix (varint %d, limit %d)", compressionName(ctype), n, MaxBlockSize)
		}
		out := grow(dst, int(n))
		if ctype == compressionZSTD {
			got, err := zstdDecoder.DecodeAll(data[k:], out[:0])
			if err != nil {
				return nil, fmt.Errorf("ZSTD: %w", err)
			}
			if len(got) != int(n) {
				return nil, fmt.Errorf("ZSTD: %d bytes uncompressed, prefix says %d", len(got), n)
			}
			return got, nil
		}
		m, err := lz4.UncompressBlock(data[k:], out)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", compressionName(ctype), err)
		}
		if m != int(n) {
			return nil, fmt.Errorf("%s: %d bytes uncompressed, prefix says %d", compressionName(ctype), m, n)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s compression is not supported (none, Snappy, LZ4, LZ4HC and ZSTD are)", compressionName(ctype))
}

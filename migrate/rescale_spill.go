package migrate

// The rescale's spill: entries bound for one output subtask are written, per source, into chunks of
// consecutive key groups (files, or buffers when the whole rescale fits the budget), then read back
// sorted by key group.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/statecraft/statecraft/statecore/keyed"
)

// spillChunk is the spilled entries of consecutive key groups of one output subtask, one part
// per source.
type spillChunk struct {
	sub   int
	parts []spillPart
	// big says the chunk is one key group, kg, larger than a chunk's budget: it is streamed
	// from its parts (stream) instead of loaded.
	big bool
	kg  int32
}

// spillPart is what one source spilled into one chunk: a file, or a buffer when the whole
// rescale fits the spill budget.
type spillPart struct {
	buf   *bytes.Buffer
	file  string
	f     *os.File // open while the source is spilled
	size  int64    // bytes spilled
	count int      // entries, to size the slice the chunk is loaded into
}

func (p *spillPart) open(stage string, inMemory bool, bufSize int) (*bufio.Writer, error) {
	if inMemory {
		p.buf = &bytes.Buffer{}
		return bufio.NewWriterSize(p.buf, 4096), nil
	}
	f, err := os.CreateTemp(filepath.Join(stage, spillDir), "chunk-*")
	if err != nil {
		return nil, err
	}
	p.file, p.f = f.Name(), f
	return bufio.NewWriterSize(f, bufSize), nil
}

// close flushes the writer open returned, and closes the part's file.
func (p *spillPart) close(w *bufio.Writer) error {
	err := w.Flush()
	if p.f != nil {
		if cerr := p.f.Close(); err == nil {
			err = cerr
		}
		p.f = nil
	}
	return err
}

// load returns the chunk's records, its parts concatenated in source order, read straight into
// one buffer of the chunk's size.
func (c *spillChunk) load() ([]byte, int, error) {
	var size int64
	count := 0
	for _, p := range c.parts {
		size += p.size
		count += p.count
	}
	for _, p := range c.parts {
		if p.buf != nil && p.size == size {
			return p.buf.Bytes(), count, nil // one source fed the chunk: no copy
		}
	}
	data := make([]byte, size)
	at := int64(0)
	for _, p := range c.parts {
		switch {
		case p.buf != nil:
			if int64(p.buf.Len()) != p.size {
				return nil, 0, fmt.Errorf("spill chunk: %d bytes buffered, %d spilled", p.buf.Len(), p.size)
			}
			copy(data[at:], p.buf.Bytes())
		case p.file != "":
			f, err := os.Open(p.file)
			if err != nil {
				return nil, 0, err
			}
			_, err = io.ReadFull(f, data[at:at+p.size])
			f.Close()
			if err != nil {
				return nil, 0, fmt.Errorf("spill chunk %s: %w", p.file, err)
			}
		}
		at += p.size
	}
	return data, count, nil
}

// stream writes the chunk's one key group c.kg to w as a streamed block, with the bytes
// WriteKeyGroup would write for the loaded chunk: states in order of first appearance, each
// state's entries in spill order. Its sources may each hold a run of the same state, so the parts
// are read once to find the states, then once per state (a hot key's key group usually holds
// one or two), holding one record at a time. path names the output in errors.
func (c *spillChunk) stream(w *keyed.Writer, path string) (int64, int, error) {
	streamedChunks.Add(1)
	var order []int
	err := c.walk(func(kg, sid int, _, _ []byte) error {
		if kg != int(c.kg) {
			return fmt.Errorf("spill chunk: a record of key group %d in the chunk of key group %d", kg, c.kg)
		}
		if !slices.Contains(order, sid) {
			order = append(order, sid)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if err := w.BeginKeyGroup(int(c.kg)); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	for _, want := range order {
		err := c.walk(func(_, sid int, key, value []byte) error {
			if sid != want {
				return nil
			}
			if err := w.Add(sid, key, value); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return nil
		})
		if err != nil {
			return 0, 0, err
		}
	}
	off, n, err := w.EndKeyGroup()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return off, n, nil
}

// streamAllChunks gives every key group with entries a chunk of its own, streamed, for tests
// (STATECRAFT_STREAM_ALL, so that Flink restores streamed outputs of the small fixtures).
var streamAllChunks = false

// streamedChunks counts the chunks streamed, so that a test can tell the path was taken.
var streamedChunks atomic.Int64

// walk calls fn with each record of the chunk (layout above, pass 2), its parts in source
// order, reading one record at a time; key and value are valid only during the call. Like
// walkSpill, it checks that the records tile each part.
func (c *spillChunk) walk(fn func(kg, sid int, key, value []byte) error) error {
	var key, value []byte
	var hdr [8]byte
	for _, p := range c.parts {
		err := func() error {
			var r io.Reader
			switch {
			case p.buf != nil:
				if int64(p.buf.Len()) != p.size {
					return fmt.Errorf("spill chunk: %d bytes buffered, %d spilled", p.buf.Len(), p.size)
				}
				r = bytes.NewReader(p.buf.Bytes())
			case p.file != "":
				f, err := os.Open(p.file)
				if err != nil {
					return err
				}
				defer f.Close()
				r = bufio.NewReaderSize(f, 256<<10)
			default:
				return nil
			}
			for at := int64(0); at < p.size; {
				if p.size-at < 8 {
					return fmt.Errorf("spill chunk %s: truncated record at byte %d", p.file, at)
				}
				if _, err := io.ReadFull(r, hdr[:]); err != nil {
					return fmt.Errorf("spill chunk %s: record at byte %d: %w", p.file, at, err)
				}
				kg := int(binary.BigEndian.Uint16(hdr[0:]))
				sid := int(binary.BigEndian.Uint16(hdr[2:]))
				kl := int64(binary.BigEndian.Uint32(hdr[4:]))
				at += 8
				if kl > p.size-at-4 {
					return fmt.Errorf("spill chunk %s: key of %d bytes at byte %d overruns the chunk", p.file, kl, at)
				}
				key = slices.Grow(key[:0], int(kl))[:kl]
				if _, err := io.ReadFull(r, key); err != nil {
					return fmt.Errorf("spill chunk %s: key at byte %d: %w", p.file, at, err)
				}
				at += kl
				if _, err := io.ReadFull(r, hdr[:4]); err != nil {
					return fmt.Errorf("spill chunk %s: value length at byte %d: %w", p.file, at, err)
				}
				vl := int64(binary.BigEndian.Uint32(hdr[:4]))
				at += 4
				if vl > p.size-at {
					return fmt.Errorf("spill chunk %s: value of %d bytes at byte %d overruns the chunk", p.file, vl, at)
				}
				value = slices.Grow(value[:0], int(vl))[:vl]
				if _, err := io.ReadFull(r, value); err != nil {
					return fmt.Errorf("spill chunk %s: value at byte %d: %w", p.file, at, err)
				}
				at += vl
				if err := fn(kg, sid, key, value); err != nil {
					return err
				}
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// remove drops the chunk's parts once written (or when the rescale stops).
func (c *spillChunk) remove() {
	for i := range c.parts {
		p := &c.parts[i]
		if p.f != nil {
			p.f.Close()
			p.f = nil
		}
		if p.file != "" {
			os.Remove(p.file)
			p.file = ""
		}
		p.buf = nil
	}
}

// parseSpill reads back the records of one spill chunk, ordered by key group and, within a key
// group, as they were spilled (a stable counting sort: one pass counts the records of each key
// group, a second puts each at its place); the entries alias data.
func parseSpill(data []byte, count int) ([]keyed.Entry, error) {
	lo, hi := 1<<16, -1
	n := 0
	if err := walkSpill(data, func(kg, _ int, _, _ []byte) {
		lo, hi = min(lo, kg), max(hi, kg)
		n++
	}); err != nil {
		return nil, err
	}
	if n == 0 {
		return make([]keyed.Entry, 0, count), nil
	}
	next := make([]int, hi-lo+2) // first free place of each key group
	walkSpill(data, func(kg, _ int, _, _ []byte) { next[kg-lo+1]++ })
	for i := 1; i < len(next); i++ {
		next[i] += next[i-1]
	}
	out := make([]keyed.Entry, n)
	walkSpill(data, func(kg, sid int, key, value []byte) {
		out[next[kg-lo]] = keyed.Entry{KeyGroup: kg, StateID: sid, Key: key, Value: value}
		next[kg-lo]++
	})
	return out, nil
}

// appendSpillHead appends the head of one spill record: key group and state id (2 bytes each)
// and the key's length (4 bytes), big-endian; the key, the value's length (4 bytes) and the
// value follow. walkSpill reads records back; rescale, load and patch write them.
func appendSpillHead(dst []byte, kg, sid, keyLen int) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(kg))
	dst = binary.BigEndian.AppendUint16(dst, uint16(sid))
	return binary.BigEndian.AppendUint32(dst, uint32(keyLen))
}

// walkSpill calls fn with each record of a spill chunk, and checks that the records tile it.
func walkSpill(data []byte, fn func(kg, sid int, key, value []byte)) error {
	for p := 0; p < len(data); {
		if len(data)-p < 8 {
			return fmt.Errorf("spill chunk: truncated record at byte %d", p)
		}
		kg := int(binary.BigEndian.Uint16(data[p:]))
		sid := int(binary.BigEndian.Uint16(data[p+2:]))
		kl := int(binary.BigEndian.Uint32(data[p+4:]))
		p += 8
		if kl > len(data)-p-4 {
			return fmt.Errorf("spill chunk: key of %d bytes at byte %d overruns the chunk", kl, p)
		}
		key := data[p : p+kl]
		p += kl
		vl := int(binary.BigEndian.Uint32(data[p:]))
		p += 4
		if vl > len(data)-p {
			return fmt.Errorf("spill chunk: value of %d bytes at byte %d overruns the chunk", vl, p)
		}
		fn(kg, sid, key, data[p:p+vl])
		p += vl
	}
	return nil
}

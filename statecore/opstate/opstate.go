package opstate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sort"

	"github.com/golang/snappy"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// ProxyVersion is OperatorBackendSerializationProxy.VERSION in Flink 2.3.0.
const ProxyVersion = 6

// MinProxyVersion is the oldest proxy version Flink 2.3.0 restores: version 5 (written before
// operator-state compression existed, by Flink 1.16) maps to state meta-info format 6, which
// 2.3.0 reads with the same reader as format 7; it has no compression flag. Versions 1 to 4 map
// to meta-info formats below 6, which 2.3.0 refuses ("upgrade first to Flink 1.16").
const MinProxyVersion = 5

// maxStream bounds the operator-state stream this package loads into memory.
const maxStream = 1 << 30

// Header is the start of an operator-state stream (OperatorBackendSerializationProxy).
type Header struct {
	Version    int32
	Compressed bool
	States     []*keyed.StateMeta // list and union states (type OPERATOR)
	Broadcast  []*keyed.StateMeta // broadcast states (type BROADCAST)
	Size       int64              // header length in bytes
}

// Meta returns the meta info of the state called name, or nil.
func (h *Header) Meta(name string) *keyed.StateMeta {
	for _, m := range h.States {
		if m.Name == name {
			return m
		}
	}
	for _, m := range h.Broadcast {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// ReadHeader reads the header at the start of an operator-state stream:
//
//	+-----------------+-----------------+-------------+-----------------+-------------+-----------------+
//	| i32 version (6) | bool compressed | i16 nStates | nStates x       | i16 nBcast  | nBcast x        |
//	|                 |                 |             | StateMeta       |             | StateMeta       |
//	+-----------------+-----------------+-------------+-----------------+-------------+-----------------+
//
// Version 5 is the same without the compression flag (never compressed).
func ReadHeader(r *javaio.Reader) (*Header, error) {
	h := &Header{}
	h.Version = r.I32("operatorHeader.version")
	if r.Err() == nil && (h.Version < MinProxyVersion || h.Version > ProxyVersion) {
		r.FailAt(0, "operatorHeader.version", "operator backend serialization proxy version %d, want %d to %d (Flink 1.16 and later; Flink 2.3.0 restores no older operator state)", h.Version, MinProxyVersion, ProxyVersion)
	}
	if h.Version >= 6 {
		h.Compressed = r.Bool("operatorHeader.compression")
	}
	for _, part := range []struct {
		name string
		dst  *[]*keyed.StateMeta
	}{{"operatorHeader.state", &h.States}, {"operatorHeader.broadcastState", &h.Broadcast}} {
		off := r.Offset()
		n := int(r.I16(part.name + "Count"))
		if r.Err() == nil && n < 0 {
			r.FailAt(off, part.name+"Count", "negative count %d", n)
		}
		for i := 0; i < n && r.Err() == nil; i++ {
			*part.dst = append(*part.dst, keyed.ReadStateMeta(r, fmt.Sprintf("%s[%d]", part.name, i)))
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	h.Size = r.Offset()
	return h, nil
}

// Element is one decoded operator-state element: a list or union element, or one broadcast
// map entry.
type Element struct {
	State string
	Mode  string // split, union, broadcast
	Index int    // position in the subtask's list (broadcast: entry index)
	Key   any    // broadcast only
	Value any
	// Raw is the element's bytes (decompressed), for copying without decoding.
	Raw []byte
}

// Stream is one subtask's operator-state stream, loaded into memory.
type Stream struct {
	Name   string
	Data   []byte
	Header *Header
	handle *metadata.OperatorStreamHandle
	bounds []int64 // every offset of every state, and the stream end, sorted
}

// Open loads the stream of a tag-4 handle and reads its header.
func Open(src io.ReaderAt, size int64, name string, h *metadata.OperatorStreamHandle) (*Stream, error) {
	if size < 0 || size > maxStream {
		return nil, fmt.Errorf("%s: operator-state stream of %d bytes (limit %d)", name, size, int64(maxStream))
	}
	if h.IsEmpty || (size == 0 && len(h.States) == 0) {
		// With file merging (Flink 1.20+) a subtask without operator state still gets a handle
		// (tag 17, an empty segment), so that the directories it names stay known: no header, no
		// states, nothing to read.
		if len(h.States) > 0 || size != 0 {
			return nil, fmt.Errorf("%s: an empty operator-state handle names %d states and %d bytes", name, len(h.States), size)
		}
		return &Stream{Name: name, Header: &Header{}, handle: h, bounds: []int64{0}}, nil
	}
	data := make([]byte, size)
	if _, err := src.ReadAt(data, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r := javaio.NewReader(bytes.NewReader(data), name, 0)
	hdr, err := ReadHeader(r)
	if err != nil {
		return nil, err
	}
	s := &Stream{Name: name, Data: data, Header: hdr, handle: h}
	for _, st := range h.States {
		for _, o := range st.Offsets {
			if o < hdr.Size || o > size {
				return nil, &javaio.FormatError{Name: name, Offset: o, Field: fmt.Sprintf("state(%q).offset", st.Name),
					Msg: fmt.Sprintf("offset outside the state bodies [%d, %d]", hdr.Size, size)}
			}
			s.bounds = append(s.bounds, o)
		}
	}
	s.bounds = append(s.bounds, size)
	sort.Slice(s.bounds, func(i, j int) bool { return s.bounds[i] < s.bounds[j] })
	return s, nil
}

// region returns the bytes of the element starting at off: up to the next offset of any state,
// or the stream end. Compressed streams are decompressed chunk by chunk.
func (s *Stream) region(off int64, field string) ([]byte, error) {
	i := sort.Search(len(s.bounds), func(i int) bool { return s.bounds[i] > off })
	end := int64(len(s.Data))
	if i < len(s.bounds) {
		end = s.bounds[i]
	}
	raw := s.Data[off:end]
	if !s.Header.Compressed {
		return raw, nil
	}
	return unframe(raw, s.Name, off, field)
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// unframe decodes the Snappy chunks of one element. With compression, Flink starts a framed
// stream for each state body and flushes it before taking each element's offset, so every
// element is a run of whole chunks; the next state's stream identifier may follow it.
//
//	+---------+---------------+-------------------+------+
//	| u8 type | u24 LE length | u32 LE masked crc | data |   type 00 compressed, 01 stored,
//	+---------+---------------+-------------------+------+   FF stream identifier, FE/80-FD skippable
func unframe(b []byte, name string, base int64, field string) ([]byte, error) {
	var out []byte
	for p := 0; p < len(b); {
		if len(b)-p < 4 {
			return nil, &javaio.FormatError{Name: name, Offset: base + int64(p), Field: field, Msg: "truncated Snappy chunk header", Err: io.ErrUnexpectedEOF}
		}
		typ := b[p]
		n := int(b[p+1]) | int(b[p+2])<<8 | int(b[p+3])<<16
		if n > len(b)-p-4 {
			return nil, &javaio.FormatError{Name: name, Offset: base + int64(p), Field: field,
				Msg: fmt.Sprintf("Snappy chunk of %d bytes, %d left before the next element", n, len(b)-p-4), Err: io.ErrUnexpectedEOF}
		}
		body := b[p+4 : p+4+n]
		switch {
		case typ == 0x00 || typ == 0x01:
			if n < 4 {
				return nil, &javaio.FormatError{Name: name, Offset: base + int64(p), Field: field, Msg: "Snappy data chunk shorter than its checksum"}
			}
			want := binary.LittleEndian.Uint32(body)
			data := body[4:]
			if typ == 0x00 {
				dl, err := snappy.DecodedLen(data)
				if err != nil || dl > 1<<16 {
					return nil, &javaio.FormatError{Name: name, Offset: base + int64(p), Field: field, Msg: "corrupt Snappy chunk", Err: err}
				}
				dec, err := snappy.Decode(nil, data)
				if err != nil {
					return nil, &javaio.FormatError{Name: name, Offset: base + int64(p), Field: field, Msg: "corrupt Snappy chunk", Err: err}
				}
				data = dec
			}
			c := crc32.Checksum(data, crc32c)
			if ((c>>15)|(c<<17))+0xa282ead8 != want {
				return nil, &javaio.FormatError{Name: name, Offset: base + int64(p), Field: field, Msg: "Snappy chunk checksum mismatch"}
			}
			out = append(out, data...)
		case typ == 0xff:
			if !bytes.Equal(body, []byte("sNaPpY")) {
				return nil, &javaio.FormatError{Name: name, Offset: base + int64(p), Field: field, Msg: "bad Snappy stream identifier"}
			}
		case typ >= 0x80:
			// skippable
		default:
			return nil, &javaio.FormatError{Name: name, Offset: base + int64(p), Field: field, Msg: fmt.Sprintf("reserved Snappy chunk type 0x%02x", typ)}
		}
		p += 4 + n
	}
	return out, nil
}

// Read decodes every element of every state of the stream, in handle order, calling fn.
func (s *Stream) Read(fn func(Element) error) error {
	for _, st := range s.handle.States {
		meta := s.Header.Meta(st.Name)
		field := fmt.Sprintf("state(%q)", st.Name)
		if meta == nil {
			return &javaio.FormatError{Name: s.Name, Field: field, Msg: "state named in _metadata is missing from the stream's header"}
		}
		mode := metadata.ModeName(st.Mode)
		val := serializer.NewCodec(meta.Serializer(keyed.SerValue))
		if st.Mode == metadata.ModeBroadcast {
			key := serializer.NewCodec(meta.Serializer(keyed.SerKey))
			for _, off := range st.Offsets {
				b, err := s.region(off, field)
				if err != nil {
					return err
				}
				in := serializer.NewInput(b)
				n := in.Length("broadcast map size", 2)
				for i := 0; i < n && in.Err() == nil; i++ {
					start := in.Pos
					k := key.Decode(in)
					v := val.Decode(in)
					if in.Err() != nil {
						break
					}
					if err := fn(Element{State: st.Name, Mode: mode, Index: i, Key: k, Value: v, Raw: b[start:in.Pos]}); err != nil {
						return err
					}
				}
				if err := s.check(in, off, field); err != nil {
					return err
				}
			}
			continue
		}
		for i, off := range st.Offsets {
			b, err := s.region(off, fmt.Sprintf("%s.element[%d]", field, i))
			if err != nil {
				return err
			}
			in := serializer.NewInput(b)
			v := val.Decode(in)
			if err := s.check(in, off, fmt.Sprintf("%s.element[%d]", field, i)); err != nil {
				return err
			}
			if err := fn(Element{State: st.Name, Mode: mode, Index: i, Value: v, Raw: b}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Stream) check(in *serializer.Input, off int64, field string) error {
	if err := in.Err(); err != nil {
		if !s.Header.Compressed {
			if de, ok := err.(*serializer.DecodeError); ok {
				return &javaio.FormatError{Name: s.Name, Offset: off + int64(de.Pos), Field: field, Msg: de.Msg}
			}
		}
		return &javaio.FormatError{Name: s.Name, Offset: off, Field: field, Msg: err.Error()}
	}
	if in.Remaining() != 0 {
		return &javaio.FormatError{Name: s.Name, Offset: off, Field: field,
			Msg: fmt.Sprintf("%d bytes left over after the element (%d bytes decoded)", in.Remaining(), in.Pos)}
	}
	return nil
}

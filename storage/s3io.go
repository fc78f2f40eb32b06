package storage

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// newRangeReader reads key with ranged GETs through a blockReader; sequential reads of large
// blocks come from GETs left open (fetchSeq).
func (s *s3Store) newRangeReader(ctx context.Context, key string, size int64, etag string) *blockReader {
	r := &rangeReader{ctx: ctx, s: s, key: key, etag: etag, size: size}
	return &blockReader{where: s.url(key), size: size, etag: etag, fetch: r.fetch, fetchSeq: r.fetchSeq, release: r.release}
}

type rangeReader struct {
	ctx  context.Context
	s    *s3Store
	key  string
	etag string
	size int64

	mu      sync.Mutex
	streams []*openBody // GETs left open for the next sequential fetch, oldest first
	closed  bool
}

// openBody is the body of a GET of the object from some offset to its end, read up to pos.
type openBody struct {
	body io.ReadCloser
	pos  int64
}

// A sequential fetch (a read going on where a block ended, see blockReader) of at least
// seqStreamMin bytes is read from a GET of the rest of the object, which stays open for the
// fetch that follows it: a state file read from start to end costs a handful of GETs instead
// of one per block. Requests cost S3Proxy more than bytes (blockReader's maxBlock), and a
// rescale s3 -> s3 reads each source file once and each output file once this way. The first
// blocks at a place stay ranged GETs of their size, so that a reader wanting only a header
// (inspect) never opens a GET of a whole state file. An object keeps at most maxOpenBodies
// GETs open (one per reader walking it); the oldest is closed to make room, and all are closed
// with the object.
const (
	seqStreamMin  = 256 << 10
	maxOpenBodies = 4
)

func (r *rangeReader) ifMatch() *string {
	if r.etag == "" {
		return nil
	}
	return aws.String(`"` + r.etag + `"`)
}

// fetch GETs [off, off+n), checking the object did not change since it was opened (If-Match).
func (r *rangeReader) fetch(off, n int64) ([]byte, error) {
	rng := fmt.Sprintf("bytes=%d-%d", off, off+n-1)
	buf, err := readBody(r.ctx, n, &r.s.read, func() (io.ReadCloser, error) {
		r.s.requests.Add(1)
		out, err := r.s.client.GetObject(r.ctx, &s3.GetObjectInput{Bucket: &r.s.loc.Bucket, Key: &r.key, Range: &rng, IfMatch: r.ifMatch()})
		if err != nil {
			return nil, err
		}
		return out.Body, nil
	})
	if err != nil {
		return nil, r.s.fail("GetObject", r.key+" ("+rng+")", err)
	}
	return buf, nil
}

// fetchSeq returns [off, off+n) from the open GET that has read up to off, or from a new GET of
// [off, end) left open for the next fetch (see seqStreamMin). A body that breaks off is closed,
// and the bytes are fetched again by fetch, with its re-requests.
func (r *rangeReader) fetchSeq(off, n int64) ([]byte, error) {
	if n < seqStreamMin {
		return r.fetch(off, n)
	}
	ob := r.take(off)
	if ob == nil {
		rng := fmt.Sprintf("bytes=%d-", off)
		r.s.requests.Add(1)
		out, err := r.s.client.GetObject(r.ctx, &s3.GetObjectInput{Bucket: &r.s.loc.Bucket, Key: &r.key, Range: &rng, IfMatch: r.ifMatch()})
		if err != nil {
			return nil, r.s.fail("GetObject", r.key+" ("+rng+")", err)
		}
		ob = &openBody{body: out.Body, pos: off}
	}
	buf := make([]byte, n)
	m, err := io.ReadFull(ob.body, buf)
	r.s.read.Add(int64(m))
	if err != nil {
		ob.body.Close()
		return r.fetch(off, n)
	}
	ob.pos += n
	r.keep(ob)
	return buf, nil
}

// take removes and returns the open GET that has read up to off, or nil.
func (r *rangeReader) take(off int64) *openBody {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, ob := range r.streams {
		if ob.pos == off {
			r.streams = append(r.streams[:i], r.streams[i+1:]...)
			return ob
		}
	}
	return nil
}

// keep keeps ob open for the next fetch, unless it reached the end or the object was closed.
func (r *rangeReader) keep(ob *openBody) {
	r.mu.Lock()
	if r.closed || ob.pos >= r.size {
		r.mu.Unlock()
		ob.body.Close()
		return
	}
	var drop *openBody
	if len(r.streams) == maxOpenBodies {
		drop, r.streams = r.streams[0], r.streams[1:]
	}
	r.streams = append(r.streams, ob)
	r.mu.Unlock()
	if drop != nil {
		drop.body.Close()
	}
}

// release closes the open GETs (the object was closed).
func (r *rangeReader) release() {
	r.mu.Lock()
	streams := r.streams
	r.streams, r.closed = nil, true
	r.mu.Unlock()
	for _, ob := range streams {
		ob.body.Close()
	}
}

// s3Writer collects an object's bytes. An object smaller than one part is sent with one
// PutObject at Commit; a larger one becomes a multipart upload whose parts are sent while the
// writer is still being filled (at most uploadAhead at a time), completed at Commit. Until then
// nothing is visible under the key.
//
// Every PutObject and UploadPart carries the Content-MD5 of its bytes, so the server refuses a
// body damaged on the way (BadDigest). A multipart object's ETag is, on S3 and the servers that
// copy it, built from its parts' MD5s:
//
//	part ETag  = hex(MD5(part bytes))
//	object ETag = hex(MD5(MD5(part 1) || MD5(part 2) || ... || MD5(part N))) + "-" + N
//
// When every part's ETag is its MD5 (not so under SSE-KMS or SSE-C, whose ETags are opaque),
// Commit also checks the object's ETag against that composite, so the object stitched together
// is the parts sent in the order sent; a mismatch removes the object and fails the Commit.
type s3Writer struct {
	ctx  context.Context
	s    *s3Store
	key  string
	part []byte

	uploadID *string
	parts    []types.CompletedPart
	sums     [][md5.Size]byte // MD5 of each part sent
	inflight chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	err      error
	done     bool
	etag     string // the committed object's ETag
}

// ETag returns the committed object's entity tag (quotes removed); "" before Commit.
func (w *s3Writer) ETag() string { return w.etag }

// contentMD5 is the Content-MD5 header value of a body whose MD5 is sum.
func contentMD5(sum [md5.Size]byte) *string {
	return aws.String(base64.StdEncoding.EncodeToString(sum[:]))
}

// compositeETag is the ETag S3 gives a multipart object whose parts have the MD5s sums.
func compositeETag(sums [][md5.Size]byte) string {
	h := md5.New()
	for _, s := range sums {
		h.Write(s[:])
	}
	return hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(sums))
}

// singlePutMax is the largest local file putFile sends with one PutObject: S3's own limit for
// one PUT. The body is streamed from the file (no memory) as UNSIGNED-PAYLOAD (see
// unsignedPayload), and servers that store parts apart and join them at completion (S3Proxy's
// filesystem backend) take one PUT several times faster than a multipart upload: 252 MiB in 2
// files, rclone copy --disable copy on the bench's S3Proxy under load 43, 7 s in single PUTs,
// 18-25 s in 8 or 64 MiB parts; a 10M-entry rescale's upload phase went from 13 s (multipart)
// to 0.5 s. A server that refuses a PUT as too large for it (EntityTooLarge) gets the multipart
// Writer instead.
var singlePutMax int64 = 5 << 30

// putFile uploads a local file of at most singlePutMax bytes with one PutObject whose body is
// read from the file (seekable, so the SDK can retry it) and carries the CRC32C of a first pass
// over it (x-amz-checksum-crc32c, signed); the returned ETag is the server's. Larger files are
// left to the Writer (done false).
//
// The checksum is CRC32C, not the Content-MD5 the Writer's parts carry: S3 and S3Proxy refuse a
// body whose CRC32C is not the header's (BadDigest) as they do a wrong Content-MD5, and Go
// computes CRC32C with the CPU's CRC instruction, about 20 times faster than MD5 (a 10M-entry
// rescale to S3 spent 0.45 s of its 2 s of CPU on the MD5 of its uploads). Where a server
// ignores the header, a migration's verification still re-reads every uploaded object (and
// TestPublishVerifiesRereadBytes corrupts one on the server after its upload).
func (s *s3Store) putFile(ctx context.Context, name string, f *os.File) (string, bool, error) {
	if err := CheckName(name); err != nil {
		return "", true, fmt.Errorf("%s: %w", s.loc, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return "", true, err
	}
	size := fi.Size()
	if size > singlePutMax || !fi.Mode().IsRegular() {
		return "", false, nil
	}
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil {
		return "", true, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	sum := base64.StdEncoding.EncodeToString(h.Sum(nil))
	if testHookPutFile != nil {
		testHookPutFile(f)
	}
	key := s.key(name)
	s.requests.Add(1)
	out, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.loc.Bucket, Key: &key,
		Body: io.NewSectionReader(f, 0, size), ContentLength: aws.Int64(size), ChecksumCRC32C: &sum}, unsignedPayload)
	if err != nil {
		if tooLarge(err) {
			return "", false, nil // nothing was stored: the multipart Writer takes the file
		}
		return "", true, s.fail("PutObject", key, err)
	}
	s.written.Add(size)
	return strings.Trim(aws.ToString(out.ETag), `"`), true, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// testHookPutFile, when set, is called by putFile between the checksum pass over the file and
// the PutObject, so that a test can change the bytes the server receives.
var testHookPutFile func(f *os.File)

// unsignedPayload signs a PutObject or UploadPart without its body (X-Amz-Content-Sha256:
// UNSIGNED-PAYLOAD), as rclone and the AWS CLI send uploads. A body signed whole costs a SHA-256
// pass before the first byte is sent, and servers buffer it whole to check the hash (S3Proxy
// refuses one over 128 MiB by default: MaxMessageLengthExceeded). The body's integrity is still
// checked by the server: every upload carries the Content-MD5 (Writer parts) or CRC32C (putFile)
// of its bytes, and the signature covers that header.
func unsignedPayload(o *s3.Options) {
	o.APIOptions = append(o.APIOptions, v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
}

// tooLarge reports whether a PutObject was refused for its size: S3 says EntityTooLarge, S3Proxy
// MaxMessageLengthExceeded ("Your request was too big").
func tooLarge(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "EntityTooLarge" || ae.ErrorCode() == "MaxMessageLengthExceeded")
}

// partSize is the multipart part size (S3's minimum is 5 MiB, all but the last part);
// uploadAhead bounds the parts in flight per writer, so memory stays at (uploadAhead+1) parts.
var (
	partSize    = 8 << 20
	uploadAhead = 2
)

func (s *s3Store) Create(ctx context.Context, name string) (Writer, error) {
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("%s: %w", s.loc, err)
	}
	return &s3Writer{ctx: ctx, s: s, key: s.key(name), inflight: make(chan struct{}, uploadAhead)}, nil
}

func (w *s3Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("write %s: already committed or aborted", w.s.url(w.key))
	}
	n := 0
	for len(p) > 0 {
		if err := w.failed(); err != nil {
			return n, err
		}
		if w.part == nil {
			w.part = make([]byte, 0, partSize)
		}
		c := min(len(p), partSize-len(w.part))
		w.part = append(w.part, p[:c]...)
		p, n = p[c:], n+c
		if len(w.part) == partSize {
			if err := w.sendPart(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

func (w *s3Writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// sendPart uploads the filled part in the background, starting the multipart upload first.
func (w *s3Writer) sendPart() error {
	if w.uploadID == nil {
		w.s.requests.Add(1)
		out, err := w.s.client.CreateMultipartUpload(w.ctx, &s3.CreateMultipartUploadInput{Bucket: &w.s.loc.Bucket, Key: &w.key})
		if err != nil {
			return w.s.fail("CreateMultipartUpload", w.key, err)
		}
		w.uploadID = out.UploadId
	}
	data := w.part
	w.part = nil
	num := int32(len(w.parts) + 1)
	sum := md5.Sum(data)
	w.parts = append(w.parts, types.CompletedPart{PartNumber: aws.Int32(num)})
	w.sums = append(w.sums, sum)
	w.inflight <- struct{}{}
	w.wg.Add(1)
	go func() {
		defer func() { <-w.inflight; w.wg.Done() }()
		w.s.requests.Add(1)
		out, err := w.s.client.UploadPart(w.ctx, &s3.UploadPartInput{Bucket: &w.s.loc.Bucket, Key: &w.key,
			UploadId: w.uploadID, PartNumber: aws.Int32(num), Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
			ContentMD5: contentMD5(sum)}, unsignedPayload)
		w.mu.Lock()
		defer w.mu.Unlock()
		if err != nil {
			if w.err == nil {
				w.err = w.s.fail(fmt.Sprintf("UploadPart %d", num), w.key, err)
			}
			return
		}
		w.s.written.Add(int64(len(data)))
		w.parts[num-1].ETag = out.ETag
	}()
	return nil
}

func (w *s3Writer) Commit() error {
	if w.done {
		return fmt.Errorf("commit %s: already committed or aborted", w.s.url(w.key))
	}
	w.done = true
	if w.uploadID == nil {
		data := w.part
		w.s.requests.Add(1)
		out, err := w.s.client.PutObject(w.ctx, &s3.PutObjectInput{Bucket: &w.s.loc.Bucket, Key: &w.key,
			Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))), ContentMD5: contentMD5(md5.Sum(data))}, unsignedPayload)
		if err != nil {
			return w.s.fail("PutObject", w.key, err)
		}
		w.s.written.Add(int64(len(data)))
		w.etag = strings.Trim(aws.ToString(out.ETag), `"`)
		return nil
	}
	if len(w.part) > 0 {
		if err := w.sendPart(); err != nil {
			w.abort()
			return err
		}
	}
	w.wg.Wait()
	if err := w.failed(); err != nil {
		w.abort()
		return err
	}
	w.s.requests.Add(1)
	out, err := w.s.client.CompleteMultipartUpload(w.ctx, &s3.CompleteMultipartUploadInput{Bucket: &w.s.loc.Bucket, Key: &w.key,
		UploadId: w.uploadID, MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts}})
	if err != nil {
		w.abort()
		return w.s.fail("CompleteMultipartUpload", w.key, err)
	}
	w.etag = strings.Trim(aws.ToString(out.ETag), `"`)
	if err := w.checkComposite(); err != nil {
		// The object is visible now, but not the bytes sent: it must not stay under the name.
		if rerr := w.s.Remove(context.WithoutCancel(w.ctx), strings.TrimPrefix(w.key, w.s.keyPrefix())); rerr != nil {
			return fmt.Errorf("%w (and removing it failed: %v)", err, rerr)
		}
		return err
	}
	return nil
}

// checkComposite compares the completed object's ETag with the composite of the parts' MD5s,
// when the server's part ETags are MD5s (see s3Writer).
func (w *s3Writer) checkComposite() error {
	for i, p := range w.parts {
		if strings.Trim(aws.ToString(p.ETag), `"`) != hex.EncodeToString(w.sums[i][:]) {
			return nil // opaque part tags (encryption): Content-MD5 was the check
		}
	}
	if want := compositeETag(w.sums); w.etag != want {
		return w.s.fail("CompleteMultipartUpload", w.key, fmt.Errorf("the object's ETag %q is not %q, the composite of the MD5s of the %d parts sent", w.etag, want, len(w.sums)))
	}
	return nil
}

func (w *s3Writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.abort()
	return nil
}

func (w *s3Writer) abort() {
	w.wg.Wait()
	w.part = nil
	if w.uploadID != nil {
		w.s.abortUpload(w.key, w.uploadID)
	}
}

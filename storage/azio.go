package storage

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"hash"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
)

// azWriter collects a blob's bytes. A blob of at most one block is sent with one Put Blob at
// Commit; a larger one is staged block by block (Put Block, one block of memory) as the writer
// fills, and Put Block List at Commit makes it visible. Staged blocks that are never committed
// are invisible, and Azure drops them after a week. The content MD5 is computed on the way and
// stored with the blob (see md5ETag).
type azWriter struct {
	ctx  context.Context
	s    *azStore
	key  string
	bb   *blockblob.Client
	buf  []byte
	ids  []string
	sum  hash.Hash
	done bool
}

// azBlock is the block size; a variable so that a test reaches the block path with small blobs.
var azBlock = 8 << 20

func (s *azStore) Create(ctx context.Context, name string) (Writer, error) {
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("%s: %w", s.loc, err)
	}
	key := s.key(name)
	return &azWriter{ctx: ctx, s: s, key: key, bb: s.container.NewBlockBlobClient(key), sum: md5.New()}, nil
}

func (w *azWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("write %s: already committed or aborted", w.s.url(w.key))
	}
	n := 0
	for len(p) > 0 {
		if len(w.buf) == azBlock {
			if err := w.stage(); err != nil {
				return n, err
			}
		}
		if w.buf == nil {
			w.buf = make([]byte, 0, azBlock)
		}
		c := min(len(p), azBlock-len(w.buf))
		w.buf = append(w.buf, p[:c]...)
		w.sum.Write(p[:c])
		p, n = p[c:], n+c
	}
	return n, nil
}

// stage sends the buffered bytes as the next block.
func (w *azWriter) stage() error {
	// Block IDs must all have the same length within a blob.
	id := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "statecraft-%08d", len(w.ids)))
	w.s.requests.Add(1)
	if _, err := w.bb.StageBlock(w.ctx, id, streaming.NopCloser(bytes.NewReader(w.buf)), nil); err != nil {
		return w.s.fail(fmt.Sprintf("Put Block %d", len(w.ids)+1), w.key, err)
	}
	w.s.written.Add(int64(len(w.buf)))
	w.ids = append(w.ids, id)
	w.buf = w.buf[:0]
	return nil
}

func (w *azWriter) Commit() error {
	if w.done {
		return fmt.Errorf("commit %s: already committed or aborted", w.s.url(w.key))
	}
	w.done = true
	headers := &blob.HTTPHeaders{BlobContentMD5: w.sum.Sum(nil)}
	if w.ids == nil {
		w.s.requests.Add(1)
		if _, err := w.bb.Upload(w.ctx, streaming.NopCloser(bytes.NewReader(w.buf)), &blockblob.UploadOptions{HTTPHeaders: headers}); err != nil {
			return w.s.fail("Put Blob", w.key, err)
		}
		w.s.written.Add(int64(len(w.buf)))
		w.buf = nil
		return nil
	}
	if len(w.buf) > 0 {
		if err := w.stage(); err != nil {
			return err
		}
	}
	w.buf = nil
	w.s.requests.Add(1)
	if _, err := w.bb.CommitBlockList(w.ctx, w.ids, &blockblob.CommitBlockListOptions{HTTPHeaders: headers}); err != nil {
		return w.s.fail("Put Block List", w.key, err)
	}
	return nil
}

func (w *azWriter) Abort() error {
	w.done = true
	w.buf = nil
	return nil
}

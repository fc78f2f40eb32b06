package storage

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// gcsWriter collects an object's bytes. An object of at most one chunk is sent with one
// uploadType=media POST at Commit; a larger one becomes a resumable upload whose chunks are sent
// as the writer fills (one chunk of memory), the last one, sent at Commit, naming the total size.
// GCS makes the object visible only when that last chunk arrives.
type gcsWriter struct {
	ctx     context.Context
	s       *gcsStore
	key     string
	buf     []byte
	session string // the resumable upload's URI, "" before the first chunk
	sent    int64
	done    bool
}

// gcsChunk is the resumable upload's chunk size (GCS wants a multiple of 256 KiB); a variable
// so that a test reaches the resumable path with small objects.
var gcsChunk = 8 << 20

func (s *gcsStore) Create(ctx context.Context, name string) (Writer, error) {
	if err := CheckName(name); err != nil {
		return nil, fmt.Errorf("%s: %w", s.loc, err)
	}
	return &gcsWriter{ctx: ctx, s: s, key: s.key(name)}, nil
}

func (w *gcsWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("write %s: already committed or aborted", w.s.url(w.key))
	}
	n := 0
	for len(p) > 0 {
		if len(w.buf) == gcsChunk {
			// More bytes follow, so this chunk is not the last one.
			if err := w.sendChunk(-1); err != nil {
				return n, err
			}
		}
		if w.buf == nil {
			w.buf = make([]byte, 0, gcsChunk)
		}
		c := min(len(p), gcsChunk-len(w.buf))
		w.buf = append(w.buf, p[:c]...)
		p, n = p[c:], n+c
	}
	return n, nil
}

// sendChunk sends the buffered bytes as the next chunk of the resumable upload, starting it
// first; total is the object's size for the last chunk, -1 before.
func (w *gcsWriter) sendChunk(total int64) error {
	where := w.s.url(w.key)
	if w.session == "" {
		u := w.s.base + "/upload/storage/v1/b/" + url.PathEscape(w.s.loc.Bucket) + "/o?uploadType=resumable&name=" + url.QueryEscape(w.key)
		resp, err := w.s.do(w.ctx, "objects.insert (resumable)", where, func() (*http.Request, error) {
			r, err := http.NewRequest("POST", u, nil)
			if err == nil {
				r.Header.Set("Content-Length", "0")
			}
			return r, err
		}, 200, 201)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if w.session = resp.Header.Get("Location"); w.session == "" {
			return &gcsError{op: "objects.insert (resumable)", url: where, err: fmt.Errorf("the answer names no upload session (Location header)")}
		}
	}
	data := w.buf
	end := w.sent + int64(len(data)) - 1
	size := "*"
	if total >= 0 {
		size = fmt.Sprint(total)
	}
	rng := fmt.Sprintf("bytes %d-%d/%s", w.sent, end, size)
	ok := []int{308, 200}
	if total >= 0 {
		ok = []int{200, 201}
	}
	resp, err := w.s.do(w.ctx, "objects.insert (chunk "+rng+")", where, func() (*http.Request, error) {
		r, err := newReq("PUT", w.session, data)()
		if err == nil {
			r.Header.Set("Content-Range", rng)
		}
		return r, err
	}, ok...)
	if err != nil {
		return err
	}
	resp.Body.Close()
	w.s.written.Add(int64(len(data)))
	w.sent += int64(len(data))
	w.buf = w.buf[:0]
	return nil
}

func (w *gcsWriter) Commit() error {
	if w.done {
		return fmt.Errorf("commit %s: already committed or aborted", w.s.url(w.key))
	}
	w.done = true
	if w.session != "" {
		if err := w.sendChunk(w.sent + int64(len(w.buf))); err != nil {
			w.cancel()
			return err
		}
		return nil
	}
	data := w.buf
	if data == nil {
		data = []byte{}
	}
	u := w.s.base + "/upload/storage/v1/b/" + url.PathEscape(w.s.loc.Bucket) + "/o?uploadType=media&name=" + url.QueryEscape(w.key)
	resp, err := w.s.do(w.ctx, "objects.insert", w.s.url(w.key), func() (*http.Request, error) {
		r, err := newReq("POST", u, data)()
		if err == nil {
			r.Header.Set("Content-Type", "application/octet-stream")
		}
		return r, err
	}, 200)
	if err != nil {
		return err
	}
	resp.Body.Close()
	w.s.written.Add(int64(len(data)))
	return nil
}

func (w *gcsWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.cancel()
	return nil
}

// cancel ends an unfinished resumable upload (GCS would drop it after a week anyway). It runs on
// a fresh context: the run's own may be the reason for the abort.
func (w *gcsWriter) cancel() {
	w.buf = nil
	if w.session == "" {
		return
	}
	req, err := http.NewRequest("DELETE", w.session, nil)
	if err != nil {
		return
	}
	w.s.requests.Add(1)
	if resp, err := w.s.client.Do(req); err == nil {
		resp.Body.Close()
	}
}

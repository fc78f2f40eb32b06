package storage

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// gcsStore is a key prefix in a Google Cloud Storage bucket, spoken to through the JSON API
// on net/http by statecraft itself (the official SDK adds about 38 MB to the binary for the
// few calls used here; see README.md). Credentials are Application Default Credentials
// (golang.org/x/oauth2/google: GOOGLE_APPLICATION_CREDENTIALS, gcloud's user credentials,
// workload identity federation, the GCE/GKE metadata server). STORAGE_EMULATOR_HOST, the
// variable Google's own clients honour, points it at an emulator without credentials.
//
// The calls, each retried on 408/429/5xx and network errors (retry.go):
//
//	Stat    GET    /storage/v1/b/B/o/KEY                     objects.get
//	List    GET    /storage/v1/b/B/o?prefix=P&pageToken=T    objects.list
//	Open    GET    /storage/v1/b/B/o/KEY?alt=media&generation=G, Range: bytes=a-b
//	Create  POST   /upload/storage/v1/b/B/o?uploadType=media (small objects, at Commit) or
//	        uploadType=resumable, then PUT chunks (Content-Range a-b/*, the last a-b/TOTAL)
//	Copy    POST   /storage/v1/b/B/o/KEY/rewriteTo/b/B2/o/KEY2, repeated with rewriteToken
//	        until done (server-side, any size)
//	Remove  DELETE /storage/v1/b/B/o/KEY
type gcsStore struct {
	loc    Location
	base   string // https://storage.googleapis.com, or the emulator's URL
	client *http.Client

	read, written, requests counter
}

const gcsScope = "https://www.googleapis.com/auth/devstorage.read_write"

func openGCS(ctx context.Context, l Location) (Store, error) {
	s := &gcsStore{loc: l, base: "https://storage.googleapis.com", client: &http.Client{}}
	s.read, s.written, s.requests = counters(GCS)
	if h := os.Getenv("STORAGE_EMULATOR_HOST"); h != "" {
		if !strings.Contains(h, "://") {
			h = "http://" + h
		}
		s.base = strings.TrimRight(h, "/")
		return s, nil
	}
	// The token source outlives ctx: it refreshes tokens for the whole run.
	creds, err := google.FindDefaultCredentials(context.Background(), gcsScope)
	if err != nil {
		// The error names the file or the places searched, never a key.
		return nil, fmt.Errorf("%s: find Google Application Default Credentials: %w", l, err)
	}
	s.client = &http.Client{Transport: &oauth2.Transport{Source: creds.TokenSource, Base: http.DefaultTransport}}
	return s, nil
}

func (s *gcsStore) Location() Location { return s.loc }

func (s *gcsStore) key(name string) string {
	if s.loc.Key == "" {
		return name
	}
	return s.loc.Key + "/" + name
}

func (s *gcsStore) keyPrefix() string {
	if s.loc.Key == "" {
		return ""
	}
	return s.loc.Key + "/"
}

func (s *gcsStore) url(key string) string { return "gs://" + s.loc.Bucket + "/" + key }

func (s *gcsStore) objectURL(bucket, key string) string {
	return s.base + "/storage/v1/b/" + url.PathEscape(bucket) + "/o/" + url.PathEscape(key)
}

// gcsError is a GCS failure, spelled "objects.get gs://bucket/key: 403 Forbidden (message)".
type gcsError struct {
	op, url string
	status  int
	msg     string
	err     error // a transport error, when there was no answer
}

func (e *gcsError) Error() string {
	if e.err != nil {
		return e.op + " " + e.url + ": " + e.err.Error()
	}
	if e.status == http.StatusNotFound && e.op == "objects.list" {
		return e.op + " " + e.url + ": 404 no such bucket"
	}
	if e.status == http.StatusNotFound && !strings.Contains(strings.ToLower(e.msg), "bucket") {
		return e.op + " " + e.url + ": no such object"
	}
	m := strconv.Itoa(e.status) + " " + http.StatusText(e.status)
	if e.msg != "" && e.msg != http.StatusText(e.status) {
		m += " (" + e.msg + ")"
	}
	return e.op + " " + e.url + ": " + m
}

func (e *gcsError) Unwrap() []error {
	if e.status == http.StatusNotFound {
		return []error{ErrNotExist}
	}
	if e.err != nil {
		return []error{e.err}
	}
	return nil
}

// apiError reads the JSON API's error body: {"error": {"code": 404, "message": "..."}}.
func apiError(op, where string, resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	var doc struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &doc) == nil {
		msg = doc.Error.Message
	} else if t := strings.TrimSpace(string(body)); len(t) < 200 && !strings.ContainsAny(t, "<{") {
		msg = t
	}
	return &gcsError{op: op, url: where, status: resp.StatusCode, msg: msg}
}

// do sends the request mk makes (a new one for every attempt, so that a body is sent whole
// again), retrying as retry.go says. A response with a status in ok is returned (its body is
// the caller's to close); any other is turned into an error naming op and the object.
func (s *gcsStore) do(ctx context.Context, op, where string, mk func() (*http.Request, error), ok ...int) (*http.Response, error) {
	maxAttempts := attempts()
	for attempt := 1; ; attempt++ {
		req, err := mk()
		if err != nil {
			return nil, &gcsError{op: op, url: where, err: err}
		}
		s.requests.Add(1)
		resp, err := s.client.Do(req.WithContext(ctx))
		if err != nil {
			if attempt < maxAttempts && retryErr(ctx) && wait(ctx, attempt) == nil {
				continue
			}
			// url.Error repeats the request URL; the cause says what happened.
			var ue *url.Error
			if e, isURL := err.(*url.Error); isURL {
				ue = e
				err = ue.Err
			}
			return nil, &gcsError{op: op, url: where, err: err}
		}
		for _, c := range ok {
			if resp.StatusCode == c {
				return resp, nil
			}
		}
		if retryStatus(resp.StatusCode) && attempt < maxAttempts {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if wait(ctx, attempt) == nil {
				continue
			}
		}
		defer resp.Body.Close()
		return nil, apiError(op, where, resp)
	}
}

func newReq(method, u string, body []byte) func() (*http.Request, error) {
	return func() (*http.Request, error) {
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		return http.NewRequest(method, u, r)
	}
}

// gcsObject is the part of the JSON API's object resource statecraft reads.
type gcsObject struct {
	Name       string `json:"name"`
	Size       string `json:"size"`
	MD5        string `json:"md5Hash"`
	Generation string `json:"generation"`
}

func (o gcsObject) info(name string) (Info, error) {
	size, err := strconv.ParseInt(o.Size, 10, 64)
	if err != nil {
		return Info{}, fmt.Errorf("object %s: size %q is not a number", o.Name, o.Size)
	}
	// Info.ETag carries the content's MD5 (hex), what a single-part S3 ETag is, so that
	// verification recognises a server-side copy without reading it; a composite object has
	// none and is hashed instead.
	md5, _ := base64.StdEncoding.DecodeString(o.MD5)
	return Info{Name: name, Size: size, ETag: hex.EncodeToString(md5)}, nil
}

func decodeJSON(op, where string, resp *http.Response, v any) error {
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return &gcsError{op: op, url: where, err: fmt.Errorf("reading the answer: %w", err)}
	}
	return nil
}

func (s *gcsStore) stat(ctx context.Context, name string) (gcsObject, Info, error) {
	if err := CheckName(name); err != nil {
		return gcsObject{}, Info{}, fmt.Errorf("%s: %w", s.loc, err)
	}
	key := s.key(name)
	resp, err := s.do(ctx, "objects.get", s.url(key), newReq("GET", s.objectURL(s.loc.Bucket, key), nil), 200)
	if err != nil {
		return gcsObject{}, Info{}, err
	}
	var o gcsObject
	if err := decodeJSON("objects.get", s.url(key), resp, &o); err != nil {
		return o, Info{}, err
	}
	info, err := o.info(name)
	if err != nil {
		return o, Info{}, fmt.Errorf("objects.get %s: %w", s.url(key), err)
	}
	return o, info, nil
}

func (s *gcsStore) Stat(ctx context.Context, name string) (Info, error) {
	_, info, err := s.stat(ctx, name)
	return info, err
}

func (s *gcsStore) List(ctx context.Context, dir string) ([]Info, error) {
	prefix := s.keyPrefix()
	if dir != "" {
		if err := CheckName(dir); err != nil {
			return nil, fmt.Errorf("%s: %w", s.loc, err)
		}
		prefix = s.key(dir) + "/"
	}
	var out []Info
	token := ""
	for {
		q := url.Values{"prefix": {prefix}}
		if token != "" {
			q.Set("pageToken", token)
		}
		u := s.base + "/storage/v1/b/" + url.PathEscape(s.loc.Bucket) + "/o?" + q.Encode()
		resp, err := s.do(ctx, "objects.list", s.url(prefix), newReq("GET", u, nil), 200)
		if err != nil {
			return nil, err
		}
		var page struct {
			Items []gcsObject `json:"items"`
			Next  string      `json:"nextPageToken"`
		}
		if err := decodeJSON("objects.list", s.url(prefix), resp, &page); err != nil {
			return nil, err
		}
		for _, o := range page.Items {
			name := strings.TrimPrefix(o.Name, s.keyPrefix())
			if CheckName(name) != nil {
				continue // "dir/" placeholders and names no Store name can reach
			}
			info, err := o.info(name)
			if err != nil {
				return nil, fmt.Errorf("objects.list %s: %w", s.url(prefix), err)
			}
			out = append(out, info)
		}
		if token = page.Next; token == "" {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *gcsStore) Open(ctx context.Context, name string) (Object, error) {
	o, info, err := s.stat(ctx, name)
	if err != nil {
		return nil, err
	}
	key := s.key(name)
	// Reads are pinned to the generation stat saw: a replaced object fails the read instead of
	// mixing two versions' bytes.
	u := s.objectURL(s.loc.Bucket, key) + "?alt=media&generation=" + url.QueryEscape(o.Generation)
	fetch := func(off, n int64) ([]byte, error) {
		rng := fmt.Sprintf("bytes=%d-%d", off, off+n-1)
		where := s.url(key) + " (" + rng + ")"
		buf, err := readBody(ctx, n, &s.read, func() (io.ReadCloser, error) {
			resp, err := s.do(ctx, "objects.get", where, func() (*http.Request, error) {
				r, err := http.NewRequest("GET", u, nil)
				if err == nil {
					r.Header.Set("Range", rng)
				}
				return r, err
			}, 200, 206)
			if err != nil {
				return nil, err
			}
			if resp.StatusCode == 200 && off > 0 {
				// The server ignored the range: its bytes would be the wrong ones.
				resp.Body.Close()
				return nil, &gcsError{op: "objects.get", url: where, err: errors.New("the server ignored the Range header")}
			}
			return resp.Body, nil
		})
		if err != nil {
			var ge *gcsError
			if errors.As(err, &ge) {
				return nil, err
			}
			return nil, &gcsError{op: "objects.get", url: where, err: err}
		}
		return buf, nil
	}
	return &blockReader{where: s.url(key), size: info.Size, etag: info.ETag, fetch: fetch}, nil
}

// Copy is server-side between GCS buckets of one endpoint: objects.rewrite, repeated with its
// token until done, copies objects of any size (large ones take several calls) without their
// bytes passing through statecraft.
func (s *gcsStore) Copy(ctx context.Context, dst string, src Store, srcName string) (bool, error) {
	o, ok := src.(*gcsStore)
	if !ok || o.base != s.base {
		return false, copyThrough(ctx, s, dst, src, srcName)
	}
	if err := CheckName(dst); err != nil {
		return false, fmt.Errorf("%s: %w", s.loc, err)
	}
	if err := CheckName(srcName); err != nil {
		return false, fmt.Errorf("%s: %w", o.loc, err)
	}
	from, to := o.key(srcName), s.key(dst)
	op := "objects.rewrite " + o.url(from) + " to"
	token := ""
	for {
		u := o.objectURL(o.loc.Bucket, from) + "/rewriteTo/b/" + url.PathEscape(s.loc.Bucket) + "/o/" + url.PathEscape(to)
		if token != "" {
			u += "?rewriteToken=" + url.QueryEscape(token)
		}
		resp, err := s.do(ctx, op, s.url(to), func() (*http.Request, error) {
			r, err := http.NewRequest("POST", u, strings.NewReader("{}"))
			if err == nil {
				r.Header.Set("Content-Type", "application/json")
			}
			return r, err
		}, 200)
		if err != nil {
			return false, err
		}
		var st struct {
			Done  bool   `json:"done"`
			Token string `json:"rewriteToken"`
		}
		if err := decodeJSON(op, s.url(to), resp, &st); err != nil {
			return false, err
		}
		if st.Done {
			return true, nil
		}
		if st.Token == "" {
			return false, &gcsError{op: op, url: s.url(to), err: fmt.Errorf("the rewrite is not done and gave no token to go on with")}
		}
		token = st.Token
	}
}

func (s *gcsStore) Remove(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("%s: %w", s.loc, err)
	}
	key := s.key(name)
	_, err := s.do(ctx, "objects.delete", s.url(key), newReq("DELETE", s.objectURL(s.loc.Bucket, key), nil), 204, 200)
	if err != nil && isNotExist(err) {
		return nil
	}
	return err
}

func isNotExist(err error) bool {
	e, ok := err.(*gcsError)
	return ok && e.status == http.StatusNotFound
}

func (s *gcsStore) Stats() Stats {
	return Stats{Read: s.read.Load(), Written: s.written.Load(), Requests: s.requests.Load()}
}

func (s *gcsStore) Close() error { return nil }

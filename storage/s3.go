package storage

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// s3Store is a key prefix in an S3 bucket. The client is aws-sdk-go-v2 (chosen by measurement,
// see README.md): the whole AWS credential chain (environment, shared config and profiles, SSO,
// web identity/IRSA, container and instance metadata), AWS_REGION, AWS_ENDPOINT_URL_S3 and
// AWS_ENDPOINT_URL for S3-compatible servers, and UploadPartCopy for server-side copies of
// objects over CopyObject's 5 GiB limit.
type s3Store struct {
	loc      Location
	client   *s3.Client
	endpoint string // the custom endpoint, "" for AWS: copies are server-side only within one

	read, written, requests counter
}

// Retries: throttling (503 SlowDown, 429) and transient network errors are retried with
// jittered exponential backoff, at most s3MaxAttempts times (AWS_MAX_ATTEMPTS overrides), never
// forever; the retry token
// bucket is off so that a long migration under throttling keeps retrying each request.
const (
	s3MaxAttempts = 8
	s3MaxBackoff  = 10 * time.Second
)

func openS3(ctx context.Context, l Location) (Store, error) {
	attempts := s3MaxAttempts
	if v := os.Getenv("AWS_MAX_ATTEMPTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: AWS_MAX_ATTEMPTS=%q: want a whole number of at least 1", l, v)
		}
		attempts = n
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRetryer(func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = attempts
			o.MaxBackoff = s3MaxBackoff
			o.RateLimiter = ratelimit.None
		})
	}))
	if err != nil {
		// The error names the file or variable that was wrong, never a secret.
		return nil, fmt.Errorf("%s: load AWS configuration: %w", l, err)
	}
	if cfg.Region == "" {
		// S3-compatible servers accept any region; AWS redirects a wrong one with an error
		// that names the bucket's region.
		cfg.Region = "us-east-1"
	}
	s := &s3Store{loc: l}
	s.read, s.written, s.requests = counters(S3)
	s.client = s3.NewFromConfig(cfg, func(o *s3.Options) {
		// The SDK's default CRC checksums on every upload are refused by some S3-compatible
		// servers; send them only where S3 requires them.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		if o.BaseEndpoint != nil {
			s.endpoint = *o.BaseEndpoint
			// Virtual-hosted addressing (bucket.host) cannot work on an IP address or
			// localhost: servers there are addressed path-style.
			if u, err := url.Parse(s.endpoint); err == nil {
				h := u.Hostname()
				if net.ParseIP(h) != nil || h == "localhost" || strings.HasSuffix(h, ".localhost") {
					o.UsePathStyle = true
				}
			}
		}
		if os.Getenv("AWS_S3_USE_PATH_STYLE") == "true" {
			o.UsePathStyle = true
		}
	})
	return s, nil
}

func (s *s3Store) Location() Location { return s.loc }

func (s *s3Store) key(name string) string {
	if s.loc.Key == "" {
		return name
	}
	return s.loc.Key + "/" + name
}

func (s *s3Store) url(key string) string { return "s3://" + s.loc.Bucket + "/" + key }

// s3Error is an S3 failure, spelled "GetObject s3://bucket/key: AccessDenied (message)".
type s3Error struct {
	op, url string
	err     error
}

func (e *s3Error) Error() string {
	var ae smithy.APIError
	if errors.As(e.err, &ae) {
		msg := ae.ErrorCode()
		if m := ae.ErrorMessage(); m != "" && m != msg {
			msg += " (" + m + ")"
		}
		if ae.ErrorCode() == "NotFound" || ae.ErrorCode() == "NoSuchKey" {
			msg = "no such object"
		}
		return e.op + " " + e.url + ": " + msg
	}
	// The SDK's text of a network failure repeats the URL and request details; the network
	// error itself says what happened.
	var ne *net.OpError
	if errors.As(e.err, &ne) {
		return e.op + " " + e.url + ": " + ne.Error()
	}
	return e.op + " " + e.url + ": " + e.err.Error()
}

func (e *s3Error) Unwrap() []error {
	if isNotFound(e.err) {
		return []error{e.err, ErrNotExist}
	}
	return []error{e.err}
}

func isNotFound(err error) bool {
	var nf *types.NotFound
	var nk *types.NoSuchKey
	var ae smithy.APIError
	return errors.As(err, &nf) || errors.As(err, &nk) ||
		(errors.As(err, &ae) && (ae.ErrorCode() == "NotFound" || ae.ErrorCode() == "NoSuchKey"))
}

func (s *s3Store) fail(op, key string, err error) error {
	return &s3Error{op: op, url: s.url(key), err: err}
}

func (s *s3Store) Stat(ctx context.Context, name string) (Info, error) {
	if err := CheckName(name); err != nil {
		return Info{}, fmt.Errorf("%s: %w", s.loc, err)
	}
	key := s.key(name)
	s.requests.Add(1)
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.loc.Bucket, Key: &key})
	if err != nil {
		return Info{}, s.fail("HeadObject", key, err)
	}
	return Info{Name: name, Size: aws.ToInt64(out.ContentLength), ETag: strings.Trim(aws.ToString(out.ETag), `"`)}, nil
}

func (s *s3Store) List(ctx context.Context, dir string) ([]Info, error) {
	prefix := s.loc.Key
	if dir != "" {
		if err := CheckName(dir); err != nil {
			return nil, fmt.Errorf("%s: %w", s.loc, err)
		}
		prefix = s.key(dir)
	}
	if prefix != "" {
		prefix += "/"
	}
	var out []Info
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.loc.Bucket, Prefix: &prefix})
	for p.HasMorePages() {
		s.requests.Add(1)
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.fail("ListObjectsV2", prefix, err)
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			name := strings.TrimPrefix(k, s.keyPrefix())
			if CheckName(name) != nil {
				continue // "dir/" markers and keys no Store name can reach
			}
			out = append(out, Info{Name: name, Size: aws.ToInt64(o.Size), ETag: strings.Trim(aws.ToString(o.ETag), `"`)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *s3Store) keyPrefix() string {
	if s.loc.Key == "" {
		return ""
	}
	return s.loc.Key + "/"
}

func (s *s3Store) Open(ctx context.Context, name string) (Object, error) {
	info, err := s.Stat(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.newRangeReader(ctx, s.key(name), info.Size, info.ETag), nil
}

// Copy is server-side within one S3 endpoint: CopyObject up to 5 GiB, UploadPartCopy in parts
// above; the bytes never pass through statecraft.
func (s *s3Store) Copy(ctx context.Context, dst string, src Store, srcName string) (bool, error) {
	o, ok := src.(*s3Store)
	if !ok || o.endpoint != s.endpoint {
		return false, copyThrough(ctx, s, dst, src, srcName)
	}
	if err := CheckName(dst); err != nil {
		return false, fmt.Errorf("%s: %w", s.loc, err)
	}
	info, err := o.Stat(ctx, srcName)
	if err != nil {
		return false, err
	}
	from, to := o.key(srcName), s.key(dst)
	source := url.PathEscape(o.loc.Bucket) + "/" + escapeKey(from)
	if info.Size <= maxCopyObject {
		s.requests.Add(1)
		if _, err := s.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &s.loc.Bucket, Key: &to, CopySource: &source}); err != nil {
			return false, s.fail("CopyObject "+o.url(from)+" to", to, err)
		}
		return true, nil
	}
	return true, s.multipartCopy(ctx, to, source, o.url(from), info.Size)
}

// maxCopyObject is the largest object one CopyObject copies (S3's limit); copyPartSize is the
// part size of the multipart copy above it. Variables so that a test reaches the multipart path
// with small objects.
var (
	maxCopyObject int64 = 5 << 30
	copyPartSize  int64 = 512 << 20
)

func (s *s3Store) multipartCopy(ctx context.Context, to, source, fromURL string, size int64) (err error) {
	s.requests.Add(1)
	up, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &s.loc.Bucket, Key: &to})
	if err != nil {
		return s.fail("CreateMultipartUpload", to, err)
	}
	defer func() {
		if err != nil {
			s.abortUpload(to, up.UploadId)
		}
	}()
	var parts []types.CompletedPart
	for off, n := int64(0), int32(1); off < size; off, n = off+copyPartSize, n+1 {
		end := min(off+copyPartSize, size) - 1
		rng := fmt.Sprintf("bytes=%d-%d", off, end)
		s.requests.Add(1)
		out, err := s.client.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: &s.loc.Bucket, Key: &to,
			UploadId: up.UploadId, PartNumber: aws.Int32(n), CopySource: &source, CopySourceRange: &rng})
		if err != nil {
			return s.fail(fmt.Sprintf("UploadPartCopy %s (%s) to", fromURL, rng), to, err)
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(n), ETag: out.CopyPartResult.ETag})
	}
	s.requests.Add(1)
	_, err = s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &s.loc.Bucket, Key: &to,
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		return s.fail("CompleteMultipartUpload", to, err)
	}
	return nil
}

// abortUpload drops an unfinished multipart upload, so that its parts are not kept (and billed).
// It runs on a fresh context: the run's own may be the reason for the abort.
func (s *s3Store) abortUpload(key string, id *string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.requests.Add(1)
	s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.loc.Bucket, Key: &key, UploadId: id})
}

// escapeKey escapes each element of a key for the x-amz-copy-source header.
func escapeKey(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return path.Join(parts...)
}

func (s *s3Store) Remove(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("%s: %w", s.loc, err)
	}
	key := s.key(name)
	s.requests.Add(1)
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.loc.Bucket, Key: &key}); err != nil && !isNotFound(err) {
		return s.fail("DeleteObject", key, err)
	}
	return nil
}

func (s *s3Store) Stats() Stats {
	return Stats{Read: s.read.Load(), Written: s.written.Load(), Requests: s.requests.Load()}
}

func (s *s3Store) Close() error { return nil }

package storage

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// azStore is a blob-name prefix in an Azure Blob Storage container. The client is the official
// azblob SDK with azidentity (chosen by measurement, see README.md: about 2 MB together).
// Credentials, first match wins:
//
//	AZURE_STORAGE_CONNECTION_STRING           account, key and endpoint in one (Azurite's too)
//	AZURE_STORAGE_ACCOUNT + AZURE_STORAGE_KEY SharedKey
//	AZURE_STORAGE_ACCOUNT alone               Microsoft Entra ID through azidentity's default
//	                                          chain: AZURE_CLIENT_ID/SECRET/TENANT_ID or a
//	                                          certificate, workload identity, managed identity,
//	                                          the az CLI's login
//
// The account may come from the URL instead (abfs[s]://container@ACCOUNT.dfs.core.windows.net,
// wasb[s]://container@ACCOUNT.blob.core.windows.net); AZURE_STORAGE_BLOB_ENDPOINT overrides
// https://ACCOUNT.blob.core.windows.net. abfs:// is read and written through the blob
// endpoint, which serves the same data for hierarchical-namespace (ADLS Gen2) accounts.
//
// The calls: Get Blob Properties (Stat), List Blobs (List), Get Blob with a range and If-Match
// (Open), Put Blob or Put Block + Put Block List (Create/Commit), Copy Blob within one account
// (server-side, any size, polled until done), Delete Blob. The SDK retries 408, 429, 500, 502,
// 503, 504 and network errors with bounded exponential backoff (maxAttempts in all).
type azStore struct {
	loc       Location
	client    *azblob.Client
	container *container.Client

	read, written, requests counter
}

func openAzure(ctx context.Context, l Location) (Store, error) {
	opts := &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: int32(attempts() - 1), RetryDelay: firstBackoff, MaxRetryDelay: maxBackoff},
		// Without telemetry the User-Agent says only what the SDK is.
		Telemetry: policy.TelemetryOptions{Disabled: true},
	}}
	s := &azStore{loc: l}
	s.read, s.written, s.requests = counters(AzBlob)
	var err error
	switch cs, account := os.Getenv("AZURE_STORAGE_CONNECTION_STRING"), os.Getenv("AZURE_STORAGE_ACCOUNT"); {
	case cs != "":
		if a := connAccount(cs); l.Account != "" && a != "" && !strings.EqualFold(a, l.Account) {
			return nil, fmt.Errorf("%s: the URL names storage account %q, AZURE_STORAGE_CONNECTION_STRING account %q", l, l.Account, a)
		}
		if s.client, err = azblob.NewClientFromConnectionString(cs, opts); err != nil {
			// The SDK's message about a malformed string does not repeat the key.
			return nil, fmt.Errorf("%s: AZURE_STORAGE_CONNECTION_STRING: %v", l, redactAzure(err))
		}
	default:
		if l.Account != "" {
			if account != "" && !strings.EqualFold(account, l.Account) {
				return nil, fmt.Errorf("%s: the URL names storage account %q, AZURE_STORAGE_ACCOUNT %q", l, l.Account, account)
			}
			account = l.Account
		}
		if account == "" {
			return nil, fmt.Errorf("%s: no storage account: set AZURE_STORAGE_ACCOUNT (with AZURE_STORAGE_KEY, or Microsoft Entra ID credentials), AZURE_STORAGE_CONNECTION_STRING, or use abfss://CONTAINER@ACCOUNT.dfs.core.windows.net/PATH", l)
		}
		endpoint := os.Getenv("AZURE_STORAGE_BLOB_ENDPOINT")
		if endpoint == "" {
			endpoint = "https://" + account + ".blob.core.windows.net/"
		}
		if key := os.Getenv("AZURE_STORAGE_KEY"); key != "" {
			cred, err := azblob.NewSharedKeyCredential(account, key)
			if err != nil {
				return nil, fmt.Errorf("%s: AZURE_STORAGE_KEY: not a base64 account key", l)
			}
			s.client, err = azblob.NewClientWithSharedKeyCredential(endpoint, cred, opts)
		} else {
			cred, cerr := azidentity.NewDefaultAzureCredential(nil)
			if cerr != nil {
				return nil, fmt.Errorf("%s: Azure credentials: %v", l, cerr)
			}
			s.client, err = azblob.NewClient(endpoint, cred, opts)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: Azure blob endpoint %s: %v", l, endpoint, err)
		}
	}
	s.container = s.client.ServiceClient().NewContainerClient(l.Bucket)
	return s, nil
}

// connAccount returns the AccountName of a connection string.
func connAccount(cs string) string {
	for _, kv := range strings.Split(cs, ";") {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.EqualFold(strings.TrimSpace(k), "AccountName") {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func (s *azStore) Location() Location { return s.loc }

func (s *azStore) key(name string) string {
	if s.loc.Key == "" {
		return name
	}
	return s.loc.Key + "/" + name
}

func (s *azStore) keyPrefix() string {
	if s.loc.Key == "" {
		return ""
	}
	return s.loc.Key + "/"
}

func (s *azStore) url(key string) string { return "azblob://" + s.loc.Bucket + "/" + key }

// azError is an Azure failure in one line, "Get Blob azblob://container/key: AuthorizationFailure
// (403)": the SDK's own text spans lines and repeats the request.
type azError struct {
	op, url string
	err     error
}

func (e *azError) Error() string {
	var re *azcore.ResponseError
	if errors.As(e.err, &re) {
		code := re.ErrorCode
		switch {
		case code == "BlobNotFound" || (code == "" && re.StatusCode == http.StatusNotFound):
			return e.op + " " + e.url + ": no such object"
		case code == "":
			code = http.StatusText(re.StatusCode)
		}
		return fmt.Sprintf("%s %s: %s (%d)", e.op, e.url, code, re.StatusCode)
	}
	var ne *net.OpError
	if errors.As(e.err, &ne) {
		return e.op + " " + e.url + ": " + ne.Error()
	}
	return e.op + " " + e.url + ": " + redactAzure(e.err)
}

func (e *azError) Unwrap() []error {
	if azNotFound(e.err) {
		return []error{e.err, ErrNotExist}
	}
	return []error{e.err}
}

// azNotFound: the blob is missing (a missing container is an error of its own).
func azNotFound(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && (re.ErrorCode == "BlobNotFound" || (re.ErrorCode == "" && re.StatusCode == http.StatusNotFound))
}

// redactAzure keeps the first line of an SDK error: later lines repeat the request, whose URL
// may carry a SAS token.
func redactAzure(err error) string {
	m, _, _ := strings.Cut(err.Error(), "\n")
	if i := strings.Index(m, "sig="); i >= 0 {
		m = m[:i] + "sig=REDACTED"
	}
	return m
}

func (s *azStore) fail(op, key string, err error) error {
	return &azError{op: op, url: s.url(key), err: err}
}

// md5ETag is what Info.ETag carries on Azure: the content MD5 (hex) the blob's properties keep,
// which statecraft sets on every upload and Copy Blob keeps, so that verification recognises a
// server-side copy without reading it. A blob without one has "" and is hashed instead.
func md5ETag(md5 []byte) string { return hex.EncodeToString(md5) }

func (s *azStore) props(ctx context.Context, name string) (blob.GetPropertiesResponse, error) {
	if err := CheckName(name); err != nil {
		return blob.GetPropertiesResponse{}, fmt.Errorf("%s: %w", s.loc, err)
	}
	key := s.key(name)
	s.requests.Add(1)
	p, err := s.container.NewBlobClient(key).GetProperties(ctx, nil)
	if err != nil {
		return p, s.fail("Get Blob Properties", key, err)
	}
	return p, nil
}

func (s *azStore) Stat(ctx context.Context, name string) (Info, error) {
	p, err := s.props(ctx, name)
	if err != nil {
		return Info{}, err
	}
	return Info{Name: name, Size: deref(p.ContentLength), ETag: md5ETag(p.ContentMD5)}, nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func (s *azStore) List(ctx context.Context, dir string) ([]Info, error) {
	prefix := s.keyPrefix()
	if dir != "" {
		if err := CheckName(dir); err != nil {
			return nil, fmt.Errorf("%s: %w", s.loc, err)
		}
		prefix = s.key(dir) + "/"
	}
	var out []Info
	p := s.container.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix})
	for p.More() {
		s.requests.Add(1)
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.fail("List Blobs", prefix, err)
		}
		for _, b := range page.Segment.BlobItems {
			if b.Name == nil || b.Properties == nil {
				continue
			}
			name := strings.TrimPrefix(*b.Name, s.keyPrefix())
			if CheckName(name) != nil {
				continue // names no Store name can reach
			}
			out = append(out, Info{Name: name, Size: deref(b.Properties.ContentLength), ETag: md5ETag(b.Properties.ContentMD5)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *azStore) Open(ctx context.Context, name string) (Object, error) {
	p, err := s.props(ctx, name)
	if err != nil {
		return nil, err
	}
	key := s.key(name)
	bc := s.container.NewBlobClient(key)
	// If-Match on the ETag stat saw: a replaced blob fails the read instead of mixing two
	// versions' bytes.
	cond := &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: p.ETag}}
	fetch := func(off, n int64) ([]byte, error) {
		where := fmt.Sprintf("%s (bytes=%d-%d)", key, off, off+n-1)
		buf, err := readBody(ctx, n, &s.read, func() (io.ReadCloser, error) {
			s.requests.Add(1)
			resp, err := bc.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: n}, AccessConditions: cond})
			return resp.Body, err
		})
		if err != nil {
			return nil, s.fail("Get Blob", where, err)
		}
		return buf, nil
	}
	return &blockReader{where: s.url(key), size: deref(p.ContentLength), etag: md5ETag(p.ContentMD5), fetch: fetch}, nil
}

// Copy is server-side within one storage account: Copy Blob, which copies blobs of any size
// without their bytes passing through statecraft, polled until the service reports it done.
func (s *azStore) Copy(ctx context.Context, dst string, src Store, srcName string) (bool, error) {
	o, ok := src.(*azStore)
	if !ok || o.client.URL() != s.client.URL() {
		return false, copyThrough(ctx, s, dst, src, srcName)
	}
	if err := CheckName(dst); err != nil {
		return false, fmt.Errorf("%s: %w", s.loc, err)
	}
	if err := CheckName(srcName); err != nil {
		return false, fmt.Errorf("%s: %w", o.loc, err)
	}
	from, to := o.key(srcName), s.key(dst)
	op := "Copy Blob " + o.url(from) + " to"
	bc := s.container.NewBlobClient(to)
	s.requests.Add(1)
	resp, err := bc.StartCopyFromURL(ctx, o.container.NewBlobClient(from).URL(), nil)
	if err != nil {
		return false, s.fail(op, to, err)
	}
	status := resp.CopyStatus
	for n := 1; status != nil && *status == blob.CopyStatusTypePending; n++ {
		if err := wait(ctx, min(n, 4)); err != nil {
			return false, s.fail(op, to, err)
		}
		s.requests.Add(1)
		p, err := bc.GetProperties(ctx, nil)
		if err != nil {
			return false, s.fail(op, to, err)
		}
		status = p.CopyStatus
		if status != nil && *status != blob.CopyStatusTypeSuccess && *status != blob.CopyStatusTypePending {
			desc := ""
			if p.CopyStatusDescription != nil {
				desc = ": " + *p.CopyStatusDescription
			}
			return false, s.fail(op, to, fmt.Errorf("copy %s%s", *status, desc))
		}
	}
	return true, nil
}

func (s *azStore) Remove(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("%s: %w", s.loc, err)
	}
	key := s.key(name)
	s.requests.Add(1)
	if _, err := s.container.NewBlobClient(key).Delete(ctx, nil); err != nil && !azNotFound(err) {
		return s.fail("Delete Blob", key, err)
	}
	return nil
}

func (s *azStore) Stats() Stats {
	return Stats{Read: s.read.Load(), Written: s.written.Load(), Requests: s.requests.Load()}
}

func (s *azStore) Close() error { return nil }

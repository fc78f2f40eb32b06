package storage

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// Kinds of store a Location names. The zero Kind is invalid.
type Kind string

const (
	Local  Kind = "file"   // a local (or mounted) file system
	S3     Kind = "s3"     // Amazon S3 and S3-compatible servers
	GCS    Kind = "gs"     // Google Cloud Storage
	AzBlob Kind = "azblob" // Azure Blob Storage (and ADLS Gen2 through its blob endpoint)
)

// Location is a parsed savepoint location: a local directory or a bucket and key prefix.
type Location struct {
	Kind Kind
	// Path is the cleaned local path (Local only).
	Path string
	// Bucket is the S3 or GCS bucket, or the Azure container.
	Bucket string
	// Account is the Azure storage account (from abfs/wasb URLs), empty otherwise.
	Account string
	// Key is the object key prefix, slash-separated, without leading or trailing slash.
	Key string
}

// String spells the location the way the user would: a local path, or the canonical URL
// (s3a:// and s3p:// become s3://, abfs:// and wasb:// become azblob://).
func (l Location) String() string {
	if l.Kind == Local {
		return l.Path
	}
	if l.Key == "" {
		return string(l.Kind) + "://" + l.Bucket
	}
	return string(l.Kind) + "://" + l.Bucket + "/" + l.Key
}

// Join returns the location of name (slash-separated, relative) under l.
func (l Location) Join(name string) Location {
	if l.Kind == Local {
		l.Path = filepath.Join(l.Path, filepath.FromSlash(name))
		return l
	}
	l.Key = strings.Trim(path.Join(l.Key, name), "/")
	return l
}

// Dir returns the parent of l and l's last element.
func (l Location) Dir() (Location, string) {
	if l.Kind == Local {
		base := filepath.Base(l.Path)
		l.Path = filepath.Dir(l.Path)
		return l, base
	}
	dir, base := path.Split(l.Key)
	l.Key = strings.Trim(dir, "/")
	return l, base
}

// Supported lists the spellings statecraft accepts, for error messages.
const Supported = "s3:// (also s3a://, s3p://), gs://, azblob:// (also abfs[s]://, wasb[s]://), file:// and local paths"

// schemes maps every scheme Flink uses for a store statecraft knows onto its Kind.
var schemes = map[string]Kind{
	"s3": S3, "s3a": S3, "s3p": S3,
	"gs":     GCS,
	"azblob": AzBlob, "abfs": AzBlob, "abfss": AzBlob, "wasb": AzBlob, "wasbs": AzBlob,
	"file": Local,
}

// Parse reads a savepoint location: a local path (relative or absolute), file:/path,
// file:///path, s3://bucket/prefix (s3a, s3p), gs://bucket/prefix, azblob://container/prefix, or
// Flink's Azure spellings abfs[s]://container@account.dfs.core.windows.net/prefix and
// wasb[s]://container@account.blob.core.windows.net/prefix. A scheme statecraft does not know
// (hdfs://, oss://, ...) is refused by name.
func Parse(s string) (Location, error) {
	if s == "" {
		return Location{}, fmt.Errorf("empty location: want a local path or a URL (%s)", Supported)
	}
	scheme, ok := schemeOf(s)
	if !ok {
		return Location{Kind: Local, Path: filepath.Clean(s)}, nil
	}
	kind, known := schemes[strings.ToLower(scheme)]
	if !known {
		return Location{}, fmt.Errorf("%s: the %s:// scheme is not supported; statecraft reads and writes %s", s, scheme, Supported)
	}
	u, err := url.Parse(s)
	if err != nil {
		return Location{}, fmt.Errorf("%s: not a valid URL: %w", s, err)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Location{}, fmt.Errorf("%s: a savepoint location takes no query or fragment", s)
	}
	if kind == Local {
		if u.Host != "" && u.Host != "localhost" {
			return Location{}, fmt.Errorf("%s: a file URL on host %q is not local (want file:///path)", s, u.Host)
		}
		if !strings.HasPrefix(u.Path, "/") {
			return Location{}, fmt.Errorf("%s: a file URL needs an absolute path (file:///path)", s)
		}
		return Location{Kind: Local, Path: filepath.Clean(filepath.FromSlash(u.Path))}, nil
	}
	l := Location{Kind: kind, Bucket: u.Host, Key: strings.Trim(u.Path, "/")}
	if u.User != nil {
		// abfs://container@account.dfs.core.windows.net/...: the "user" is the container.
		if kind != AzBlob {
			return Location{}, fmt.Errorf("%s: credentials do not belong in the URL; use the environment or the store's configuration", redact(u))
		}
		l.Bucket = u.User.Username()
		l.Account, _, _ = strings.Cut(u.Hostname(), ".")
	}
	if l.Bucket == "" {
		return Location{}, fmt.Errorf("%s: no bucket (want %s://BUCKET/PREFIX)", s, scheme)
	}
	for _, e := range strings.Split(l.Key, "/") {
		if e == "." || e == ".." || (e == "" && l.Key != "") {
			return Location{}, fmt.Errorf("%s: key prefix %q has an empty, \".\" or \"..\" element", s, l.Key)
		}
	}
	return l, nil
}

// schemeOf returns the URL scheme of s when s starts with one (letters, digits, "+-.", then
// ":"); a Windows drive letter or a path with a colon later on is not a scheme.
func schemeOf(s string) (string, bool) {
	i := strings.IndexByte(s, ':')
	if i < 2 {
		return "", false
	}
	for j, c := range s[:i] {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return "", false
		}
	}
	return s[:i], true
}

// redact drops the password of a URL for messages.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

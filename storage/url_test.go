package storage

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Location
		err  string // substring of the error; "" = success
	}{
		{in: "sp", want: Location{Kind: Local, Path: "sp"}},
		{in: "/data/sp/", want: Location{Kind: Local, Path: "/data/sp"}},
		{in: "file:///data/sp", want: Location{Kind: Local, Path: "/data/sp"}},
		{in: "file:/data/sp", want: Location{Kind: Local, Path: "/data/sp"}},
		{in: "file://localhost/data/sp", want: Location{Kind: Local, Path: "/data/sp"}},
		{in: "s3://b/sp/savepoint-1", want: Location{Kind: S3, Bucket: "b", Key: "sp/savepoint-1"}},
		{in: "s3a://b/sp/", want: Location{Kind: S3, Bucket: "b", Key: "sp"}},
		{in: "s3p://b", want: Location{Kind: S3, Bucket: "b"}},
		{in: "S3://b/k", want: Location{Kind: S3, Bucket: "b", Key: "k"}},
		{in: "gs://b/k", want: Location{Kind: GCS, Bucket: "b", Key: "k"}},
		{in: "azblob://c/k", want: Location{Kind: AzBlob, Bucket: "c", Key: "k"}},
		{in: "abfss://c@acct.dfs.core.windows.net/sp/x", want: Location{Kind: AzBlob, Bucket: "c", Account: "acct", Key: "sp/x"}},
		{in: "wasbs://c@acct.blob.core.windows.net/sp", want: Location{Kind: AzBlob, Bucket: "c", Account: "acct", Key: "sp"}},
		{in: "", err: "empty location"},
		{in: "hdfs://nn:8020/sp", err: "the hdfs:// scheme is not supported; statecraft reads and writes s3://"},
		{in: "oss://b/sp", err: "the oss:// scheme is not supported"},
		{in: "file://otherhost/sp", err: `file URL on host "otherhost" is not local`},
		{in: "s3:///sp", err: "no bucket"},
		{in: "s3://b/a/../c", err: `".." element`},
		{in: "s3://b/a//c", err: "empty"},
		{in: "s3://key:secret@b/sp", err: "credentials do not belong in the URL"},
		{in: "s3://b/sp?x=1", err: "no query"},
	} {
		got, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) = %v, %v; want error containing %q", c.in, got, err, c.err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("Parse(%q): error shows the secret: %v", c.in, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestLocationJoinString(t *testing.T) {
	l, _ := Parse("s3a://b/sp")
	if got := l.Join("x/_metadata").String(); got != "s3://b/sp/x/_metadata" {
		t.Errorf("Join = %s", got)
	}
	dir, base := l.Join("_metadata").Dir()
	if dir.String() != "s3://b/sp" || base != "_metadata" {
		t.Errorf("Dir = %s, %s", dir, base)
	}
	root, _ := Parse("s3://b")
	if got := root.Join("k").String(); got != "s3://b/k" {
		t.Errorf("root Join = %s", got)
	}
}

// TestOpenAzureAccount: the storage account an abfs:// or wasb:// URL names must be the one the
// credentials are for.
func TestOpenAzureAccount(t *testing.T) {
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "DefaultEndpointsProtocol=http;AccountName=acct1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:1/acct1;")
	if _, err := OpenURL(t.Context(), "abfss://c@acct1.dfs.core.windows.net/sp"); err != nil {
		t.Errorf("the same account: %v", err)
	}
	_, err := OpenURL(t.Context(), "wasbs://c@other.blob.core.windows.net/sp")
	if err == nil || !strings.Contains(err.Error(), `azblob://c/sp: the URL names storage account "other", AZURE_STORAGE_CONNECTION_STRING account "acct1"`) {
		t.Errorf("another account: %v", err)
	}
}

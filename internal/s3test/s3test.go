// Package s3test runs a real S3 server for tests: S3Proxy 4.1.0 (Maven Central
// org.gaul:s3proxy:4.1.0, classifier jar-with-dependencies, fetched into ~/.m2 by mvn when
// missing) on a free loopback port, with SigV4 authentication and its filesystem backend, so
// that every object is a plain file under Dir/BUCKET/KEY that a test can look at.
//
// One server serves a whole test binary: the first Require starts it, Main stops it after the
// tests ran. Tests are skipped, with a message saying so, only when Java is absent; a server that
// cannot be fetched or started fails the test.
package s3test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/statecraft/statecraft/internal/emulator"
)

// Version is the S3Proxy release the tests run (2.6.0 refuses current SDKs' checksums).
const Version = "4.1.0"

// Credentials the server accepts.
const (
	AccessKey = "statecraft-test"
	SecretKey = "statecraft-test-secret"
	Region    = "us-east-1"
)

// Server is a running S3Proxy: an emulator.Process (Kill, Stop, Log) with the S3 endpoint.
type Server struct {
	*emulator.Process
	Endpoint string // http://127.0.0.1:PORT
	Dir      string // the filesystem backend's base directory: Dir/BUCKET/KEY
}

var (
	once    sync.Once
	shared  *Server
	fail    error
	baseDir string
)

// Require returns the shared server, starting it on first use, and points the AWS SDK's
// environment at it (credentials, region, AWS_ENDPOINT_URL_S3; no shared config files, no
// instance metadata). It skips t when Java is absent.

// MaxSignedRequest is the largest request body with a payload signed whole (no aws-chunked
// streaming) that the test server takes; a larger one is refused with MaxMessageLengthExceeded.
const MaxSignedRequest = 16 << 20

// MaxSinglePut is the largest object the test server takes in one PutObject (S3's limit is
// 5 GiB); a larger one is refused with EntityTooLarge.
const MaxSinglePut = 20 << 20

func Require(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("s3test: Java is absent, so the S3 server (S3Proxy " + Version + ") cannot run; install a JDK 17 to run this test")
	}
	once.Do(func() {
		baseDir, fail = os.MkdirTemp("", "statecraft-s3proxy-")
		if fail == nil {
			shared, fail = Start(baseDir)
		}
	})
	if fail != nil {
		t.Fatalf("s3test: %v", fail)
	}
	for k, v := range shared.Env() {
		os.Setenv(k, v)
	}
	return shared
}

// Main runs the tests of a package and stops the server afterwards; call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	if baseDir != "" {
		os.RemoveAll(baseDir)
	}
	return code
}

// Env is the environment that points the AWS SDK (and statecraft) at the server.
func (s *Server) Env() map[string]string {
	return map[string]string{
		"AWS_ACCESS_KEY_ID":           AccessKey,
		"AWS_SECRET_ACCESS_KEY":       SecretKey,
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  Region,
		"AWS_ENDPOINT_URL_S3":         s.Endpoint,
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_CONFIG_FILE":             filepath.Join(s.Dir, "..", "no-aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(s.Dir, "..", "no-aws-credentials"),
		"AWS_PROFILE":                 "",
	}
}

// Bucket makes a new empty bucket (a directory of the filesystem backend) and returns its name.
func (s *Server) Bucket(t testing.TB, name string) string {
	t.Helper()
	if err := os.Mkdir(filepath.Join(s.Dir, name), 0o755); err != nil {
		t.Fatalf("s3test: create bucket %s: %v", name, err)
	}
	return name
}

// Jar returns the S3Proxy jar in the local Maven repository, fetching it with mvn when missing.
func Jar() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	jar := filepath.Join(home, ".m2", "repository", "org", "gaul", "s3proxy", Version, "s3proxy-"+Version+"-jar-with-dependencies.jar")
	if _, err := os.Stat(jar); err == nil {
		return jar, nil
	}
	out, err := exec.Command("mvn", "-B", "-q", "dependency:get", "-Dartifact=org.gaul:s3proxy:"+Version+":jar:jar-with-dependencies").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("fetch S3Proxy %s with mvn: %v\n%s", Version, err, out)
	}
	if _, err := os.Stat(jar); err != nil {
		return "", fmt.Errorf("mvn fetched S3Proxy %s but %s is missing: %w", Version, jar, err)
	}
	return jar, nil
}

// Own starts a server for t alone (a test that kills it must not take the shared one down),
// points the AWS environment at it for the rest of t (requests tried at most twice, so that a
// dead server fails a run at once), and stops it when t ends. It skips t when Java is absent.
func Own(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("s3test: Java is absent, so the S3 server (S3Proxy " + Version + ") cannot run; install a JDK 17 to run this test")
	}
	s, err := Start(t.TempDir())
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	t.Cleanup(s.Stop)
	for k, v := range s.Env() {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_MAX_ATTEMPTS", "2")
	return s
}

// Restart starts a stopped (or killed) server again on the same port and data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	n, err := start(filepath.Dir(s.Dir), s.Port)
	if err != nil {
		t.Fatalf("s3test: restart: %v", err)
	}
	*s = *n
}

// Start runs S3Proxy with its filesystem backend under base/data on a free loopback port and
// returns when it answers HTTP (an anonymous request is refused with 403 once it is up).
func Start(base string) (*Server, error) { return start(base, 0) }

// start is Start on port (a free one if 0).
func start(base string, port int) (*Server, error) {
	jar, err := Jar()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(base, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = emulator.FreePort(); err != nil {
			return nil, err
		}
	}
	// S3Proxy takes its endpoint (and so its port) from the properties file.
	pf := filepath.Join(base, "s3proxy.properties")
	props := strings.Join([]string{
		fmt.Sprintf("s3proxy.endpoint=http://127.0.0.1:%d", port),
		"s3proxy.authorization=aws-v2-or-v4",
		"s3proxy.identity=" + AccessKey,
		"s3proxy.credential=" + SecretKey,
		// A request whose payload is signed whole may carry at most MaxSignedRequest bytes
		// (S3Proxy's default is 128 MiB, S3's 5 GiB): small, so that a test reaches the limit
		// with a file of a few MiB.
		fmt.Sprintf("s3proxy.v4-max-non-chunked-request-size=%d", MaxSignedRequest),
		// Small too, so that a test reaches S3's limit of one PUT with a file of a few MiB.
		fmt.Sprintf("s3proxy.max-single-part-object-size=%d", MaxSinglePut),
		"jclouds.provider=filesystem",
		"jclouds.filesystem.basedir=" + data,
		"",
	}, "\n")
	if err := os.WriteFile(pf, []byte(props), 0o600); err != nil {
		return nil, err
	}
	p, err := emulator.StartOn("S3Proxy", port, func(int) []string {
		return []string{"java", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-jar", jar, "--properties", pf}
	}, "/")
	if err != nil {
		return nil, err
	}
	return &Server{Process: p, Endpoint: p.URL, Dir: data}, nil
}

// Throttle starts a loopback proxy in front of the server that answers every nth request with
// 503 SlowDown, as S3 does under load, and passes the others through unchanged (the Host header
// too, so SigV4 signatures made for the proxy's address still verify); its URL is the endpoint
// to use. It is stopped when t ends.
func (s *Server) Throttle(t testing.TB, every int) *emulator.Throttler {
	t.Helper()
	return emulator.ThrottleWith(t, s.Endpoint, every, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
	})
}

// Tamper starts a loopback proxy in front of the server that passes requests through unchanged
// and hands every response body to rewrite (with the request it answers) before the client sees
// it: a server that lies about what it stored, for tests of what the client checks. It returns
// the proxy's endpoint; the proxy is stopped when t ends.
func (s *Server) Tamper(t testing.TB, rewrite func(r *http.Request, body []byte) []byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(s.Endpoint)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
		},
		ModifyResponse: func(resp *http.Response) error {
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			body = rewrite(resp.Request, body)
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
			return nil
		},
	}
	srv := &http.Server{Handler: proxy}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

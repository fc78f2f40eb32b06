package kafkaclient

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadProperties(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       map[string]string
		err        string
	}{
		{"forms", "a=1\nb: 2\nc 3\n  d = 4 \n", map[string]string{"a": "1", "b": "2", "c": "3", "d": "4 "}, ""},
		{"comments and blanks", "# x=1\n! y=2\n\n   \nz=3\n", map[string]string{"z": "3"}, ""},
		// Java drops the leading blanks of a continued line (hence "twothree")
		{"continuation", "j=one \\\n    two\\\n three\n", map[string]string{"j": "one twothree"}, ""},
		{"escaped backslash ends no line", "p=C:\\\\dir\\\\\nq=1\n", map[string]string{"p": `C:\dir\`, "q": "1"}, ""},
		{"escapes", "k\\=x=a\\tb\\u0041\\n\n", map[string]string{"k=x": "a\tbA\n"}, ""},
		{"empty value", "e=\nf\n", map[string]string{"e": "", "f": ""}, ""},
		{"twice", "a=1\na=2\n", nil, "line 2: a is given twice"},
		{"bad unicode", "a=\\u12\n", nil, `malformed \uXXXX`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadProperties(strings.NewReader(tc.text), "f.properties")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "f.properties") {
					t.Fatalf("err %v, want %q naming the file", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%q: got %q, %v; want %q", tc.text, got, err, tc.want)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, []byte("not pem"), 0o644)
	plainJAAS := `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p\"q";`
	for _, tc := range []struct {
		name      string
		props     map[string]string
		bootstrap string
		check     func(*Config) bool
		err       string
	}{
		{"plaintext", nil, "a:1, b:2", func(c *Config) bool {
			return reflect.DeepEqual(c.Bootstrap, []string{"a:1", "b:2"}) && c.TLS == nil && c.Mechanism == ""
		}, ""},
		{"bootstrap from the file", map[string]string{"bootstrap.servers": "x:9"}, "", func(c *Config) bool { return c.Bootstrap[0] == "x:9" }, ""},
		{"sasl plain", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.jaas.config": plainJAAS}, "h:1",
			func(c *Config) bool {
				return c.Mechanism == "PLAIN" && c.User == "u" && c.Password == `p"q` && c.TLS == nil
			}, ""},
		{"scram over tls, system roots", map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
			"sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username=u password="p";`}, "h:1",
			func(c *Config) bool { return c.Mechanism == "SCRAM-SHA-512" && c.TLS != nil && c.TLS.RootCAs == nil }, ""},
		{"no bootstrap", nil, "", nil, "no bootstrap servers"},
		{"bootstrap twice", map[string]string{"bootstrap.servers": "x:9"}, "y:9", nil, "give it once"},
		{"unknown key", map[string]string{"linger.ms": "5"}, "h:1", nil, "linger.ms not supported"},
		{"tls key without tls", map[string]string{"ssl.truststore.type": "PEM"}, "h:1", nil, "uses no TLS"},
		{"gssapi", map[string]string{"security.protocol": "SASL_SSL", "sasl.jaas.config": "x"}, "h:1", nil, "GSSAPI is not supported"},
		{"wrong module", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": plainJAAS}, "h:1", nil, "want login module org.apache.kafka.common.security.scram.ScramLoginModule"},
		{"no semicolon", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p"`}, "h:1", nil, "does not end with ';'"},
		{"jks", map[string]string{"security.protocol": "SSL", "ssl.truststore.location": ca}, "h:1", nil, "default is JKS"},
		{"pkcs12", map[string]string{"security.protocol": "SSL", "ssl.truststore.type": "PKCS12", "ssl.truststore.location": ca}, "h:1", nil, "PKCS12 stores are not read"},
		{"not pem", map[string]string{"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": ca}, "h:1", nil, "no PEM CERTIFICATE block"},
		{"bad protocol", map[string]string{"security.protocol": "TLS"}, "h:1", nil, "want PLAINTEXT, SSL"},
		{"bad timeout", map[string]string{"request.timeout.ms": "0"}, "h:1", nil, "want milliseconds > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig(tc.props, tc.bootstrap, "client.properties")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !tc.check(c) {
				t.Fatalf("%+v, %v", c, err)
			}
		})
	}
}

func TestParseTimestamp(t *testing.T) {
	for in, want := range map[string]int64{"1700000000025": 1700000000025, "2023-11-14T22:13:20.025Z": 1700000000025, "2023-11-14T23:13:20+01:00": 1700000000000} {
		if got, err := ParseTimestamp(in); err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-5", "yesterday", "1969-12-31T00:00:00Z"} {
		if _, err := ParseTimestamp(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

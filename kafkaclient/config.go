package kafkaclient

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Config is how to reach a cluster: seed brokers, TLS and SASL.
type Config struct {
	Bootstrap []string
	ClientID  string
	TLS       *tls.Config // nil: plaintext
	// SASL: mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 with a user and password; empty
	// mechanism: no SASL.
	Mechanism, User, Password string
	Timeout                   time.Duration // per request; 0: 30 s
}

// supported are the client properties Config takes (Kafka's names); any other key is an error
// rather than silently not taking effect.
var supported = map[string]string{
	"bootstrap.servers":                     "seed brokers (or --bootstrap-servers)",
	"client.id":                             "client id sent to the brokers",
	"request.timeout.ms":                    "per request timeout",
	"security.protocol":                     "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL",
	"sasl.mechanism":                        "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512",
	"sasl.jaas.config":                      "PlainLoginModule or ScramLoginModule with username and password",
	"ssl.truststore.type":                   "PEM (JKS and PKCS12 stores are not read)",
	"ssl.truststore.location":               "PEM file of CA certificates",
	"ssl.truststore.certificates":           "PEM CA certificates inline",
	"ssl.keystore.type":                     "PEM (JKS and PKCS12 stores are not read)",
	"ssl.keystore.location":                 "PEM file with the client certificate chain and an unencrypted PKCS#8 key",
	"ssl.keystore.certificate.chain":        "PEM client certificate chain inline",
	"ssl.keystore.key":                      "PEM unencrypted PKCS#8 client key inline",
	"ssl.endpoint.identification.algorithm": "https (default) or empty to skip host name verification",
}

// ParseConfig builds a Config from client properties (see ReadProperties) and the
// --bootstrap-servers flag (comma separated; it may instead be in the properties, not both).
// name is the properties file, for errors.
func ParseConfig(props map[string]string, bootstrap, name string) (*Config, error) {
	fail := func(key, format string, a ...any) (*Config, error) {
		return nil, fmt.Errorf("%s: %s: "+format, append([]any{name, key}, a...)...)
	}
	var unknown []string
	for k := range props {
		if _, ok := supported[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		var keys []string
		for k := range supported {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("%s: %s not supported (it would not take effect); supported: %s", name, strings.Join(unknown, ", "), strings.Join(keys, ", "))
	}
	c := &Config{ClientID: props["client.id"], Timeout: 30 * time.Second}
	switch b, ok := props["bootstrap.servers"]; {
	case ok && bootstrap != "":
		return fail("bootstrap.servers", "given here and as --bootstrap-servers: give it once")
	case ok:
		bootstrap = b
	}
	for _, s := range strings.Split(bootstrap, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.Bootstrap = append(c.Bootstrap, s)
		}
	}
	if len(c.Bootstrap) == 0 {
		return nil, fmt.Errorf("no bootstrap servers: give --bootstrap-servers HOST:PORT[,HOST:PORT...]")
	}
	if t, ok := props["request.timeout.ms"]; ok {
		ms, err := strconv.ParseInt(t, 10, 64)
		if err != nil || ms <= 0 {
			return fail("request.timeout.ms", "want milliseconds > 0, got %q", t)
		}
		c.Timeout = time.Duration(ms) * time.Millisecond
	}
	proto := props["security.protocol"]
	if proto == "" {
		proto = "PLAINTEXT"
	}
	var useTLS, useSASL bool
	switch strings.ToUpper(proto) {
	case "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return fail("security.protocol", "want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, got %q", proto)
	}
	for k := range props {
		if strings.HasPrefix(k, "ssl.") && !useTLS {
			return fail(k, "set, but security.protocol %s uses no TLS", proto)
		}
		if strings.HasPrefix(k, "sasl.") && !useSASL {
			return fail(k, "set, but security.protocol %s uses no SASL", proto)
		}
	}
	if useTLS {
		t, err := tlsConfig(props, name)
		if err != nil {
			return nil, err
		}
		c.TLS = t
	}
	if useSASL {
		mech := props["sasl.mechanism"]
		if mech == "" {
			mech = "GSSAPI" // Kafka's default
		}
		module := ""
		switch mech {
		case "PLAIN":
			module = "org.apache.kafka.common.security.plain.PlainLoginModule"
		case "SCRAM-SHA-256", "SCRAM-SHA-512":
			module = "org.apache.kafka.common.security.scram.ScramLoginModule"
		default:
			return fail("sasl.mechanism", "%s is not supported (want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)", mech)
		}
		jaas, ok := props["sasl.jaas.config"]
		if !ok {
			return fail("sasl.jaas.config", "required for sasl.mechanism %s", mech)
		}
		user, pass, err := parseJAAS(jaas, module)
		if err != nil {
			return fail("sasl.jaas.config", "%v", err)
		}
		c.Mechanism, c.User, c.Password = mech, user, pass
	}
	return c, nil
}

// jaasOption matches one key="value" (or key=value) option of a JAAS login module entry.
var jaasOption = regexp.MustCompile(`^\s*([A-Za-z0-9_.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s";]+))`)

// parseJAAS reads "<module> required username="u" password="p";", the one entry a Kafka
// client's sasl.jaas.config holds.
func parseJAAS(s, module string) (user, pass string, err error) {
	rest := strings.TrimSpace(s)
	got, rest, _ := strings.Cut(rest, " ")
	if got != module {
		return "", "", fmt.Errorf("want login module %s, got %q", module, got)
	}
	rest = strings.TrimSpace(rest)
	flag, rest, _ := strings.Cut(rest, " ")
	if flag != "required" {
		return "", "", fmt.Errorf("want the control flag required after the module, got %q", flag)
	}
	opts := map[string]string{}
	for {
		rest = strings.TrimSpace(rest)
		if rest == ";" {
			break
		}
		if rest == "" {
			return "", "", fmt.Errorf("the entry does not end with ';'")
		}
		m := jaasOption.FindStringSubmatch(rest)
		if m == nil {
			return "", "", fmt.Errorf("want key=\"value\" options, got %q", rest)
		}
		v := m[3]
		if m[3] == "" {
			v = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[2])
		}
		opts[m[1]] = v
		rest = rest[len(m[0]):]
	}
	for k := range opts {
		if k != "username" && k != "password" {
			return "", "", fmt.Errorf("option %s is not supported (username and password are)", k)
		}
	}
	if opts["username"] == "" || opts["password"] == "" {
		return "", "", fmt.Errorf("want username and password options")
	}
	return opts["username"], opts["password"], nil
}

func tlsConfig(props map[string]string, name string) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	for _, store := range []string{"truststore", "keystore"} {
		if typ, ok := props["ssl."+store+".type"]; ok && typ != "PEM" {
			return nil, fmt.Errorf("%s: ssl.%s.type: %s stores are not read; convert it to PEM and set PEM", name, store, typ)
		}
		has := props["ssl."+store+".location"] != "" || props["ssl.truststore.certificates"] != "" && store == "truststore" ||
			props["ssl.keystore.key"] != "" && store == "keystore"
		if has && props["ssl."+store+".type"] == "" {
			return nil, fmt.Errorf("%s: ssl.%s.type: Kafka's default is JKS, which is not read; set PEM", name, store)
		}
	}
	read := func(key string) ([]byte, error) {
		if p := props[key]; p != "" {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, key, err)
			}
			return b, nil
		}
		return nil, nil
	}
	// trust: the given CA certificates, else the system's
	ca, err := read("ssl.truststore.location")
	if err != nil {
		return nil, err
	}
	if inline := props["ssl.truststore.certificates"]; inline != "" {
		if ca != nil {
			return nil, fmt.Errorf("%s: ssl.truststore.certificates and ssl.truststore.location: give one", name)
		}
		ca = []byte(inline)
	}
	if ca != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("%s: truststore: no PEM CERTIFICATE block", name)
		}
		t.RootCAs = pool
	}
	// client certificate
	ks, err := read("ssl.keystore.location")
	if err != nil {
		return nil, err
	}
	chain, key := props["ssl.keystore.certificate.chain"], props["ssl.keystore.key"]
	if (chain == "") != (key == "") {
		return nil, fmt.Errorf("%s: ssl.keystore.certificate.chain and ssl.keystore.key: give both or neither", name)
	}
	if chain != "" {
		if ks != nil {
			return nil, fmt.Errorf("%s: ssl.keystore.location and ssl.keystore.key: give one", name)
		}
		ks = []byte(chain + "\n" + key)
	}
	if ks != nil {
		for rest := ks; ; {
			var blk *pem.Block
			blk, rest = pem.Decode(rest)
			if blk == nil {
				break
			}
			if blk.Type == "ENCRYPTED PRIVATE KEY" {
				return nil, fmt.Errorf("%s: keystore: encrypted private keys are not read (ssl.key.password is not supported); give an unencrypted PKCS#8 key", name)
			}
		}
		cert, err := tls.X509KeyPair(ks, ks)
		if err != nil {
			return nil, fmt.Errorf("%s: keystore: %w", name, err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	switch alg, ok := props["ssl.endpoint.identification.algorithm"]; {
	case !ok || strings.EqualFold(alg, "https"):
	case alg == "":
		// Kafka then checks the chain but not the host name: do the same
		t.InsecureSkipVerify = true
		t.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyChainOnly(raw, t.RootCAs)
		}
	default:
		return nil, fmt.Errorf("%s: ssl.endpoint.identification.algorithm: want https or empty, got %q", name, alg)
	}
	return t, nil
}

func verifyChainOnly(raw [][]byte, roots *x509.CertPool) error {
	if len(raw) == 0 {
		return fmt.Errorf("the broker sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, r := range raw {
		c, err := x509.ParseCertificate(r)
		if err != nil {
			return fmt.Errorf("broker certificate %d: %w", i, err)
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
	return err
}

// opts are the franz-go client options for c.
func (c *Config) opts() []kgo.Opt {
	o := []kgo.Opt{kgo.SeedBrokers(c.Bootstrap...), kgo.RequestTimeoutOverhead(c.Timeout)}
	if c.ClientID != "" {
		o = append(o, kgo.ClientID(c.ClientID))
	} else {
		o = append(o, kgo.ClientID("statecraft"))
	}
	if c.TLS != nil {
		o = append(o, kgo.DialTLSConfig(c.TLS.Clone()))
	}
	switch c.Mechanism {
	case "PLAIN":
		o = append(o, kgo.SASL(plain.Auth{User: c.User, Pass: c.Password}.AsMechanism()))
	case "SCRAM-SHA-256":
		o = append(o, kgo.SASL(scram.Auth{User: c.User, Pass: c.Password}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		o = append(o, kgo.SASL(scram.Auth{User: c.User, Pass: c.Password}.AsSha512Mechanism()))
	}
	return o
}

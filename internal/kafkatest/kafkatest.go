// Package kafkatest starts a real Apache Kafka broker (KRaft, one node acting as broker and
// controller) on free loopback ports for a Go test, the same way the oracle's KafkaBroker does:
// the Kafka release of testdata/oracle/kafka-broker/pom.xml from Maven Central, run by the JDK.
// Besides a PLAINTEXT listener it opens a SASL_SSL one (SASL/PLAIN over TLS with a certificate
// made for the test), so a client's TLS and SASL settings are exercised for real. The test's
// cleanup stops the broker and removes its directory.
package kafkatest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/statecraft/statecraft/internal/emulator"
)

// SASL credentials the broker's SASL_SSL listener accepts.
const (
	User     = "alice"
	Password = "alice-secret"
)

// Broker is a running broker.
type Broker struct {
	Bootstrap string // PLAINTEXT listener
	SASLSSL   string // SASL_SSL listener (SASL/PLAIN as User, Password)
	CAFile    string // PEM of the certificate the SASL_SSL listener presents (its own CA)
	dir       string
	cmd       *exec.Cmd
	done      chan error
}

// Start starts a broker for t and stops it in t's cleanup. Without Java it fails under
// STATECRAFT_ORACLE=1 (make check must run it) and skips otherwise, saying why.
func Start(t testing.TB) *Broker {
	t.Helper()
	java, err := exec.LookPath("java")
	if err == nil {
		_, err = exec.LookPath("mvn")
	}
	if err != nil {
		if os.Getenv("STATECRAFT_ORACLE") == "1" {
			t.Fatalf("kafkatest: a real Kafka broker needs a JDK and Maven: %v", err)
		}
		t.Skipf("kafkatest: a real Kafka broker needs a JDK and Maven (%v); install them to run this test", err)
	}
	b, err := start(java, t.TempDir())
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	t.Cleanup(b.stop)
	return b
}

func start(java, dir string) (*Broker, error) {
	cp, err := classpath()
	if err != nil {
		return nil, err
	}
	ports := make([]int, 3)
	for i := range ports {
		if ports[i], err = emulator.FreePort(); err != nil {
			return nil, err
		}
	}
	certPEM, keyPEM, err := selfSigned()
	if err != nil {
		return nil, err
	}
	b := &Broker{Bootstrap: fmt.Sprintf("127.0.0.1:%d", ports[0]), SASLSSL: fmt.Sprintf("127.0.0.1:%d", ports[2]),
		CAFile: filepath.Join(dir, "ca.pem"), dir: dir, done: make(chan error, 1)}
	if err := os.WriteFile(b.CAFile, certPEM, 0o644); err != nil {
		return nil, err
	}
	controller := fmt.Sprintf("127.0.0.1:%d", ports[1])
	props := [][2]string{
		{"process.roles", "broker,controller"},
		{"node.id", "1"},
		{"controller.quorum.voters", "1@" + controller},
		{"listeners", "PLAINTEXT://" + b.Bootstrap + ",CONTROLLER://" + controller + ",SASL_SSL://" + b.SASLSSL},
		{"advertised.listeners", "PLAINTEXT://" + b.Bootstrap + ",SASL_SSL://" + b.SASLSSL},
		{"controller.listener.names", "CONTROLLER"},
		{"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL"},
		{"inter.broker.listener.name", "PLAINTEXT"},
		{"log.dirs", filepath.Join(dir, "logs")},
		{"offsets.topic.replication.factor", "1"},
		{"offsets.topic.num.partitions", "1"},
		{"transaction.state.log.replication.factor", "1"},
		{"transaction.state.log.min.isr", "1"},
		{"group.initial.rebalance.delay.ms", "0"},
		// records carry fixed timestamps from the past: time-based retention would drop them
		{"log.retention.ms", "-1"},
		{"listener.name.sasl_ssl.sasl.enabled.mechanisms", "PLAIN"},
		{"listener.name.sasl_ssl.plain.sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_` + User + `="` + Password + `";`},
		{"listener.name.sasl_ssl.ssl.keystore.type", "PEM"},
		{"listener.name.sasl_ssl.ssl.keystore.certificate.chain", string(certPEM)},
		{"listener.name.sasl_ssl.ssl.keystore.key", string(keyPEM)},
	}
	var sb strings.Builder
	for _, kv := range props {
		sb.WriteString(kv[0] + "=" + escapeValue(kv[1]) + "\n")
	}
	conf := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(conf, []byte(sb.String()), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "broker.log")
	format := exec.Command(java, "-Xmx256m", "-cp", cp, "kafka.tools.StorageTool", "format", "-t", "c3RhdGVjcmFmdC1nb3Rlc3Q", "-c", conf)
	if out, err := format.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kafka storage format: %v\n%s", err, out)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	b.cmd = exec.Command(java, "-Xmx512m", "-XX:+UseSerialGC", "-cp", cp, "kafka.Kafka", conf)
	b.cmd.Stdout, b.cmd.Stderr = logf, logf
	if err := b.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { b.done <- b.cmd.Wait(); logf.Close() }()
	if err := b.awaitReady(); err != nil {
		b.stop()
		out, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("kafka broker did not start: %v\n%s", err, tail(string(out)))
	}
	return b, nil
}

// awaitReady asks for the cluster's brokers until it answers; a start-up bound, not a timing
// test.
func (b *Broker) awaitReady() error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		md, err := adm.BrokerMetadata(ctx)
		cancel()
		if err == nil && len(md.Brokers) > 0 {
			return nil
		}
		select {
		case werr := <-b.done:
			b.done <- werr
			return fmt.Errorf("broker exited: %v", werr)
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer within 3 minutes: %v", err)
		}
	}
}

// Stop stops the broker now (a test that is done with it before its end frees the memory);
// the cleanup then has nothing left to do.
func (b *Broker) Stop() { b.stop() }

func (b *Broker) stop() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(60 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
	b.cmd = nil
}

// CreateTopics creates each topic with its partition count (replication 1).
func (b *Broker) CreateTopics(t testing.TB, partitions map[string]int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for topic, n := range partitions {
		res, err := adm.CreateTopic(ctx, int32(n), 1, nil, topic)
		if err == nil {
			err = res.Err
		}
		if err != nil {
			t.Fatalf("kafkatest: create topic %s: %v", topic, err)
		}
	}
}

// Produce writes count records "topic-partition-i" into one partition, record i with timestamp
// ts(i) (milliseconds), acknowledged by the broker.
func (b *Broker) Produce(t testing.TB, topic string, partition int32, count int, ts func(i int) int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := 0; i < count; i++ {
		r := &kgo.Record{Topic: topic, Partition: partition, Timestamp: time.UnixMilli(ts(i)),
			Value: []byte(fmt.Sprintf("%s-%d-%d", topic, partition, i))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("kafkatest: produce to %s-%d: %v", topic, partition, err)
		}
	}
}

// escapeValue writes a value for a java.util.Properties file: backslashes and line breaks
// escaped.
func escapeValue(v string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`).Replace(v)
}

// selfSigned makes a certificate for 127.0.0.1 and its unencrypted PKCS#8 key, both PEM.
func selfSigned() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "statecraft kafkatest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k}), nil
}

// classpath is the broker's classpath, resolved by Maven from testdata/oracle/kafka-broker/pom.xml
// into target/kafka-broker/classpath.txt (the file the oracle's KafkaBroker uses too) when it is
// missing or older than the pom; written under a temporary name and renamed.
func classpath() (string, error) {
	oracle, err := oracleDir()
	if err != nil {
		return "", err
	}
	pom := filepath.Join(oracle, "kafka-broker", "pom.xml")
	target := filepath.Join(oracle, "target", "kafka-broker")
	cpFile := filepath.Join(target, "classpath.txt")
	pi, err := os.Stat(pom)
	if err != nil {
		return "", err
	}
	if ci, err := os.Stat(cpFile); err != nil || ci.Size() == 0 || pi.ModTime().After(ci.ModTime()) {
		if err := os.MkdirAll(target, 0o755); err != nil {
			return "", err
		}
		tmp := fmt.Sprintf("%s.tmp%d", cpFile, os.Getpid())
		out, err := exec.Command("mvn", "-B", "-q", "-f", pom, "dependency:resolve", "dependency:build-classpath", "-Dmdep.outputFile="+tmp).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("mvn could not resolve %s: %v\n%s", pom, err, tail(string(out)))
		}
		if err := os.Rename(tmp, cpFile); err != nil {
			return "", err
		}
	}
	b, err := os.ReadFile(cpFile)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// oracleDir is testdata/oracle of the module the test runs in (nearest go.mod above).
func oracleDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "oracle"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = parent
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}

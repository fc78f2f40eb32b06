package dev.statecraft.oracle.sources;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import dev.statecraft.oracle.common.SavepointDirs;

/**
 * A real Apache Kafka broker (KRaft, one node acting as broker and controller) on two free
 * loopback ports, in its own JVM whose classpath comes from testdata/oracle/kafka-broker/pom.xml
 * (resolved by Maven once, like run.sh does for Flink). Closing it stops the JVM and deletes its
 * log directory, so every command that opens one leaves nothing running.
 */
final class KafkaBroker implements AutoCloseable {
    private final Path dir;
    private final Process process;
    /** Stops the broker if the oracle JVM exits first; removed by close (the oracle server lives on). */
    private final Thread hook;
    final String bootstrap;

    private KafkaBroker(Path dir, Process process, String bootstrap) {
        this.dir = dir;
        this.process = process;
        this.bootstrap = bootstrap;
        this.hook = new Thread(process::destroyForcibly);
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Formats a fresh log directory, starts the broker and waits (up to 3 minutes) until it answers. */
    static KafkaBroker start() throws Exception {
        String cp = brokerClasspath();
        Path dir = Files.createTempDirectory("statecraft-kafka-");
        int port = freePort();
        int controller = freePort();
        Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("node.id", "1");
        p.setProperty("controller.quorum.voters", "1@127.0.0.1:" + controller);
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controller);
        p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.setProperty("controller.listener.names", "CONTROLLER");
        p.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.setProperty("inter.broker.listener.name", "PLAINTEXT");
        p.setProperty("log.dirs", dir.resolve("logs").toString());
        // one node: internal topics cannot have more replicas than that
        p.setProperty("offsets.topic.replication.factor", "1");
        p.setProperty("offsets.topic.num.partitions", "1");
        p.setProperty("transaction.state.log.replication.factor", "1");
        p.setProperty("transaction.state.log.min.isr", "1");
        p.setProperty("group.initial.rebalance.delay.ms", "0");
        // the fixtures' records carry fixed timestamps from the past (for --to-timestamp):
        // time-based retention would delete them at once
        p.setProperty("log.retention.ms", "-1");
        Path props = dir.resolve("server.properties");
        try (var w = Files.newBufferedWriter(props)) {
            p.store(w, "statecraft oracle broker");
        }
        Path log = dir.resolve("broker.log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process format = new ProcessBuilder(java, "-Xmx256m", "-cp", cp, "kafka.tools.StorageTool", "format",
                "-t", "c3RhdGVjcmFmdC1vcmFjbGU", "-c", props.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!format.waitFor(3, TimeUnit.MINUTES) || format.exitValue() != 0) {
            format.destroyForcibly();
            String out = Files.readString(log);
            SavepointDirs.deleteTree(dir);
            throw new IllegalStateException("kafka storage format failed:\n" + out);
        }
        Process broker = new ProcessBuilder(java, "-Xmx512m", "-XX:+UseSerialGC", "-cp", cp, "kafka.Kafka", props.toString())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        KafkaBroker b = new KafkaBroker(dir, broker, "127.0.0.1:" + port);
        try {
            b.awaitReady();
        } catch (Exception e) {
            String out = Files.readString(log);
            b.close();
            throw new IllegalStateException("kafka broker did not start: " + e + "\n" + out, e);
        }
        return b;
    }

    /** Polls the cluster description until the broker answers; a start-up, not a timing test. */
    private void awaitReady() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        Exception last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) throw new IllegalStateException("broker exited with " + process.exitValue());
            try (Admin a = admin()) {
                if (!a.describeCluster().nodes().get(10, TimeUnit.SECONDS).isEmpty()) return;
            } catch (Exception e) {
                last = e;
            }
            Thread.sleep(500);
        }
        throw new IllegalStateException("no answer within 3 minutes", last);
    }

    Admin admin() {
        return Admin.create(Map.<String, Object>of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000));
    }

    /** Creates each topic with its partition count (replication 1). */
    void createTopics(Map<String, Integer> partitions) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        partitions.forEach((t, n) -> topics.add(new NewTopic(t, n, (short) 1)));
        try (Admin a = admin()) {
            a.createTopics(topics).all().get(60, TimeUnit.SECONDS);
        }
    }

    /**
     * Timestamp (ms) of record i of partition p: 10 ms apart, the spacing growing with the
     * partition, so that one point in time falls on a different offset in each partition (the
     * --to-timestamp cases; the Go tests' brokers write the same, see migrate's oracle test).
     */
    static long timestamp(int partition, int i) {
        return 1_700_000_000_000L + 10L * i * (partition + 1);
    }

    /** Writes count records "topic-partition-i" into one partition, with {@link #timestamp}s. */
    void produce(String topic, int partition, int count) throws Exception {
        produce(topic, partition, 0, count);
    }

    /** Writes records from..from+count-1 of one partition (appending to the first from). */
    void produce(String topic, int partition, int from, int count) throws Exception {
        Properties p = new Properties();
        p.setProperty(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.setProperty(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            for (int i = from; i < from + count; i++) {
                prod.send(new ProducerRecord<>(topic, partition, timestamp(partition, i), null, topic + "-" + partition + "-" + i)).get(60, TimeUnit.SECONDS);
            }
        }
    }

    @Override
    public void close() throws IOException {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
        process.destroy();
        try {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        SavepointDirs.deleteTree(dir);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /**
     * The broker's classpath, resolved by Maven from kafka-broker/pom.xml into
     * target/kafka-broker/classpath.txt the first time (and again when the pom changes).
     */
    private static String brokerClasspath() throws Exception {
        Path oracle = oracleDir();
        Path pom = oracle.resolve("kafka-broker/pom.xml");
        Path target = oracle.resolve("target/kafka-broker");
        Path cpFile = target.resolve("classpath.txt");
        if (!Files.isRegularFile(cpFile) || Files.size(cpFile) == 0
                || Files.getLastModifiedTime(pom).compareTo(Files.getLastModifiedTime(cpFile)) > 0) {
            Files.createDirectories(target);
            Path tmp = target.resolve("classpath.txt.tmp" + ProcessHandle.current().pid());
            Path log = target.resolve("mvn.log");
            // not to stdout: that is the command's answer
            Process mvn = new ProcessBuilder("mvn", "-B", "-q", "-f", pom.toString(), "dependency:resolve",
                    "dependency:build-classpath", "-Dmdep.outputFile=" + tmp)
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (mvn.waitFor() != 0) throw new IllegalStateException("mvn could not resolve " + pom + ":\n" + Files.readString(log));
            Files.move(tmp, cpFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
        return Files.readString(cpFile, StandardCharsets.UTF_8).trim();
    }

    /** testdata/oracle, found from where this class was loaded (target/flink-V/classes-H/). */
    private static Path oracleDir() throws Exception {
        Path p = Path.of(KafkaBroker.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        for (Path q = p; q != null; q = q.getParent()) {
            if (Files.isRegularFile(q.resolve("kafka-broker/pom.xml"))) return q;
        }
        throw new IllegalStateException("testdata/oracle/kafka-broker/pom.xml not found above " + p);
    }
}

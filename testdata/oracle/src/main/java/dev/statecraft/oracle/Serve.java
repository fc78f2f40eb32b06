package dev.statecraft.oracle;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import dev.statecraft.oracle.common.Cluster;

/**
 * {@code run.sh serve SOCKET [PARENT_PID]}: one JVM that runs many oracle commands, so that a test
 * suite pays for starting Java, loading Flink and warming the JIT once instead of once per judge.
 *
 * <p>Each connection on the Unix socket carries one command, run exactly as {@code run.sh COMMAND
 * ARGS...} would (through {@link Main#dispatch}). Commands run one at a time: the oracle's jobs
 * keep their sources' scripts and their collected results in static fields (Script, RestoreJob),
 * which two jobs in one JVM would share. For parallel tests, start several servers (the Makefile
 * starts one per core); the client (Go: internal/oracletest) picks an idle one. Its protocol:
 *
 * <pre>
 *   request   u32 argc, then argc times: u32 length, UTF-8 bytes      (big-endian)
 *   response  frames until the exit frame:
 *               'o' u32 length, bytes      what the command wrote to System.out
 *               'e' u32 length, bytes      what it (and Flink's log) wrote to System.err
 *               'x' u32 exit code          the last frame
 * </pre>
 *
 * <p>Every job runs on one MiniCluster the server starts before it listens (common.Cluster: a
 * MiniCluster per job cost more than most judge jobs themselves); after each command, jobs it
 * left running are cancelled. STATECRAFT_ORACLE_SHARED_CLUSTER=0 gives every job its own again.
 *
 * <p>System.out and System.err are replaced once, before Flink's logging starts, by streams that
 * write to the sink of the current thread's request. The sink is inherited by the threads a
 * command starts; the shared cluster's task threads, started before any request, write to the
 * command running now (there is one at a time). Output while no command runs goes to the
 * server's own stderr.
 *
 * <p>The server stops when PARENT_PID (the make or test process that started it) is gone, so an
 * interrupted test run never leaves a JVM behind.
 */
public final class Serve {
    private static final InheritableThreadLocal<Sink> SINK = new InheritableThreadLocal<>();
    /** The sink of the command running now (one at a time): where the shared cluster's task threads write. */
    private static volatile Sink current;
    private static final ReentrantLock ONE_AT_A_TIME = new ReentrantLock(true);
    /** The server's own stderr (its log): one line per command, which serve-summary.sh reads. */
    private static volatile PrintStream log = System.err;

    private Serve() {}

    public static int run(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: run.sh serve SOCKET [PARENT_PID]");
            return 2;
        }
        PrintStream origOut = System.out;
        PrintStream origErr = System.err;
        log = origErr;
        System.setOut(new PrintStream(new Routed('o', origOut), true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(new Routed('e', origErr), true, StandardCharsets.UTF_8));

        // Before the socket appears: a client that finds the server finds its cluster running.
        if (!"0".equals(System.getenv("STATECRAFT_ORACLE_SHARED_CLUSTER"))) {
            long t = System.nanoTime();
            Cluster.startShared();
            origErr.printf("oracle serve: shared MiniCluster started in %d ms%n", (System.nanoTime() - t) / 1_000_000);
        }
        Path socket = Path.of(args[0]);
        Files.deleteIfExists(socket);
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        // Bind under a temporary name and rename: a client that sees SOCKET finds it listening.
        Path tmp = socket.resolveSibling(socket.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        server.bind(UnixDomainSocketAddress.of(tmp));
        Files.move(tmp, socket);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Files.deleteIfExists(socket);
            } catch (IOException ignored) {
                // the socket's directory may be gone already
            }
        }));
        if (args.length == 2) {
            long parent = Long.parseLong(args[1]);
            Thread watch = new Thread(() -> {
                while (ProcessHandle.of(parent).map(ProcessHandle::isAlive).orElse(false)) {
                    try {
                        TimeUnit.MILLISECONDS.sleep(500);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                origErr.println("oracle serve: parent " + parent + " is gone, stopping");
                try {
                    Files.deleteIfExists(socket);
                } catch (IOException ignored) {
                    // the socket's directory may be gone already
                }
                // halt, not exit: the requests still running have no one to answer to, and
                // Flink's shutdown hooks would wait for their MiniClusters.
                Runtime.getRuntime().halt(0);
            }, "serve-parent-watch");
            watch.setDaemon(true);
            watch.start();
        }
        origErr.println("oracle serve: listening on " + socket);
        int n = 0;
        while (true) {
            SocketChannel ch = server.accept();
            Thread t = new Thread(() -> serveOne(ch), "serve-request-" + (++n));
            t.start();
        }
    }

    private static void serveOne(SocketChannel ch) {
        try (ch) {
            DataInputStream in = new DataInputStream(Channels.newInputStream(ch));
            int argc = in.readInt();
            if (argc < 1 || argc > 1000) {
                throw new IOException("request with " + argc + " arguments");
            }
            String[] argv = new String[argc];
            for (int i = 0; i < argc; i++) {
                int len = in.readInt();
                if (len < 0 || len > 1 << 20) {
                    throw new IOException("argument " + i + " of " + len + " bytes");
                }
                byte[] b = in.readNBytes(len);
                if (b.length != len) {
                    throw new IOException("request cut short in argument " + i);
                }
                argv[i] = new String(b, StandardCharsets.UTF_8);
            }
            Sink sink = new Sink(new DataOutputStream(Channels.newOutputStream(ch)));
            long asked = System.nanoTime();
            ONE_AT_A_TIME.lock();
            long started = System.nanoTime();
            SINK.set(sink);
            current = sink;
            int code = 1;
            int leftover = 0;
            try {
                code = Main.dispatch(argv);
            } catch (Throwable e) {
                e.printStackTrace();
                code = 1;
            } finally {
                // Jobs the command left running end before its output closes and the next
                // command starts.
                leftover = Cluster.afterCommand(log);
                System.out.flush();
                System.err.flush();
                SINK.remove();
                current = null;
                ONE_AT_A_TIME.unlock();
                // Where the suite's time goes: make check prints the busiest commands from these.
                log.printf("oracle serve: done %d ms (waited %d ms) exit %d%s: %s%n",
                        (System.nanoTime() - started) / 1_000_000, (started - asked) / 1_000_000, code,
                        leftover == 0 ? "" : leftover < 0 ? " (cluster replaced)" : " (cancelled " + leftover + " jobs it left)",
                        summary(argv));
            }
            sink.exit(code);
        } catch (IOException e) {
            System.err.println("oracle serve: request failed: " + e);
        }
    }

    /** The command and its arguments on one line, paths shortened to their last two elements. */
    private static String summary(String[] argv) {
        StringBuilder b = new StringBuilder();
        for (String a : argv) {
            if (b.length() > 0) {
                b.append(' ');
            }
            int cut = a.lastIndexOf('/', a.lastIndexOf('/') - 1);
            b.append(a.startsWith("/") && cut > 0 ? "…" + a.substring(cut) : a);
            if (b.length() > 300) {
                b.append(" …");
                break;
            }
        }
        return b.toString().replace('\n', ' ');
    }

    /** The client end of one request; closed once the exit frame is written. */
    private static final class Sink {
        private final DataOutputStream out;
        private boolean closed;

        Sink(DataOutputStream out) {
            this.out = out;
        }

        synchronized boolean write(char stream, byte[] b, int off, int len) {
            if (closed) {
                return false;
            }
            try {
                out.writeByte(stream);
                out.writeInt(len);
                out.write(b, off, len);
                out.flush();
                return true;
            } catch (IOException e) {
                closed = true; // the client went away; its output has nowhere to go
                return false;
            }
        }

        synchronized void exit(int code) throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            out.writeByte('x');
            out.writeInt(code);
            out.flush();
        }
    }

    /** Writes to the current thread's request, or to the server's own stream without one. */
    private static final class Routed extends OutputStream {
        private final char stream;
        private final OutputStream fallback;

        Routed(char stream, OutputStream fallback) {
            this.stream = stream;
            this.fallback = fallback;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            Sink s = SINK.get();
            if (s == null) {
                s = current; // a task thread of the shared cluster, working for the running command
            }
            if (s == null || !s.write(stream, b, off, len)) {
                fallback.write(b, off, len);
            }
        }

        @Override
        public void flush() throws IOException {
            fallback.flush();
        }
    }
}

package dev.statecraft.oracle.savepoints;

import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

import dev.statecraft.oracle.common.Json;

/**
 * {@code expect SAVEPOINT_DIR EXPECT_IN OUT}: reads the savepoint with the State Processor API,
 * following the operators and state types that EXPECT_IN describes (its entries are ignored), and
 * writes what Flink read as a fresh expectation to OUT. Use it on a savepoint statecraft rewrote:
 * EXPECT_IN names the new UID, max parallelism or value type.
 */
public final class Expect {
    private Expect() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: expect SAVEPOINT_DIR EXPECT_IN OUT");
            return 2;
        }
        Path sp = Paths.get(args[0]).toAbsolutePath();
        JsonNode in = Json.read(Paths.get(args[1]));
        ObjectNode out;
        try {
            out = StateDump.dump(sp.toString(), in);
        } catch (Exception e) {
            System.err.println("expect: " + sp + ": " + rootMessage(e));
            return 1;
        }
        Json.write(Paths.get(args[2]).toAbsolutePath(), out);
        return 0;
    }

    /** The outermost message and the innermost cause: Flink wraps the reason in many layers. */
    static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        String top = e.getMessage() != null ? e.getMessage() : e.toString();
        return root == e ? top : top + ": " + root.getClass().getSimpleName() + ": " + root.getMessage();
    }
}

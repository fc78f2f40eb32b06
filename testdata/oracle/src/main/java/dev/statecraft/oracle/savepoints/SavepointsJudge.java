package dev.statecraft.oracle.savepoints;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import dev.statecraft.oracle.common.Json;

/**
 * {@code judge-savepoints DIR1 EXPECT1 [DIR2 EXPECT2 ...]}: {@code judge-savepoint} for each pair
 * in one oracle call, so that a test checking several savepoints pays for one request. Every pair
 * is judged (all rejections are printed, each naming its savepoint). Exit 0 = all accepted,
 * 1 = some rejected, 2 = usage.
 *
 * <p>An EXPECT of the form {@code {"plan": PLAN_JSON, "spec": UPGRADE_SPEC_JSON}} judges a SQL
 * job's savepoint instead: {@code judge-plan PLAN SPEC DIR} must accept it (the compiled plan
 * restored from DIR, non-restored state disallowed, carries the state on as the spec's "after"
 * rows say).
 */
public final class SavepointsJudge {
    private SavepointsJudge() {}

    public static int run(String[] args) throws Exception {
        if (args.length == 0 || args.length % 2 != 0) {
            System.err.println("usage: judge-savepoints SAVEPOINT_DIR EXPECT_JSON [SAVEPOINT_DIR EXPECT_JSON ...]");
            return 2;
        }
        int rejected = 0;
        for (int i = 0; i < args.length; i += 2) {
            Path sp = Paths.get(args[i]).toAbsolutePath().normalize();
            if (!Files.isRegularFile(sp.resolve("_metadata"))) {
                System.err.println("rejected: " + sp + ": no _metadata file");
                rejected++;
                continue;
            }
            JsonNode expectation = Json.read(Paths.get(args[i + 1]));
            if (expectation.has("plan") && expectation.has("spec")) {
                int code = dev.statecraft.oracle.plans.PlanJudge.run(new String[] {
                    expectation.get("plan").asText(), expectation.get("spec").asText(), sp.toString()});
                if (code != 0) {
                    System.err.println("rejected: " + sp + ": judge-plan exited " + code + " (reason above)");
                    rejected++;
                    continue;
                }
                System.out.println("accepted: " + sp + " (restored under EXECUTE PLAN, state carried on)");
                continue;
            }
            String reason = SavepointJudge.judge(sp.toString(), expectation);
            if (reason != null) {
                System.err.println("rejected: " + sp + ": " + reason);
                rejected++;
                continue;
            }
            System.out.println("accepted: " + sp + " (" + SavepointJudge.summary(expectation) + ", read and restored into "
                    + String.join(" and ", SavepointJudge.restoreBackends(expectation)) + ")");
        }
        return rejected == 0 ? 0 : 1;
    }
}

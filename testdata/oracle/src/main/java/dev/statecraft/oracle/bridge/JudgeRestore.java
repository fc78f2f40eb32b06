package dev.statecraft.oracle.bridge;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.plans.PlanJudge;
import dev.statecraft.oracle.plans.Script;
import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.PlanReference;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.util.ExceptionUtils;

/**
 * Oracle command {@code judge-restore PLAN SAVEPOINT SPEC}: executes the compiled PLAN restoring
 * from SAVEPOINT with non-restored state NOT allowed (parallelism 2, hashmap backend), feeds the
 * spec's rows to the scripted source and waits (60 s at most) until the sink's last row per key is
 * the spec's final row for every key. Exit 0 when it is; 1 when Flink refuses the restore (its
 * message on stderr), the job fails, or the output differs (expected and seen rows on stderr).
 *
 * <p>SPEC: {@code {"sink": "counts", "input": [["src", k, v], ...], "final": [[k, c, s], ...]}}.
 * Sink rows are compared as Flink prints them ({@code +U[k, c, s]}): the last insert/update-after
 * row per first field.
 */
public final class JudgeRestore {
    private JudgeRestore() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: judge-restore PLAN SAVEPOINT SPEC");
            return 2;
        }
        String[] outcome = judge(Path.of(args[0]).toAbsolutePath(), Path.of(args[1]).toAbsolutePath(),
                Json.read(Path.of(args[2]).toAbsolutePath()));
        System.err.println("judge-restore: " + outcome[0] + ": " + outcome[1]);
        return outcome[0].equals("RESTORED") ? 0 : 1;
    }

    static String[] judge(Path plan, Path sp, JsonNode spec) throws Exception {
        return judge(plan, sp.toString(), spec);
    }

    /**
     * Restores PLAN from SP (a local directory, or a URI of a file system Flink has, e.g. s3://)
     * and feeds the spec's rows: {RESTORED, why} when the sink reached the spec's final rows, {REFUSED, Flink's message} when the submission or the job failed,
     * {REJECTED, what differs} when the job ran but the rows are not the spec's.
     */
    public static String[] judge(Path plan, String sp, JsonNode spec) throws Exception {
        String sink = spec.path("sink").asText("counts");
        List<Script.Step> steps = new ArrayList<>();
        for (JsonNode row : spec.get("input")) {
            List<Object> fields = new ArrayList<>();
            for (int i = 1; i < row.size(); i++) {
                fields.add(row.get(i).asLong());
            }
            steps.add(Script.Step.emit(row.get(0).asText(), "+I", fields));
        }
        Map<Long, String> want = new TreeMap<>();
        for (JsonNode row : spec.get("final")) {
            StringBuilder b = new StringBuilder();
            for (int i = 1; i < row.size(); i++) {
                b.append(i > 1 ? ", " : "").append(row.get(i).asLong());
            }
            want.put(row.get(0).asLong(), b.toString());
        }
        Script.install(steps, 0);

        Configuration conf = new Configuration();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        conf.setString("state.backend.type", "hashmap");
        conf.setString("execution.state-recovery.path", sp.contains("://") ? sp : new File(sp).toURI().toString());
        conf.setString("execution.state-recovery.ignore-unclaimed-state", "false");
        TableEnvironment tEnv = TableEnvironment.create(
                EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
        JobClient client;
        try {
            TableResult r = tEnv.loadPlan(PlanReference.fromFile(plan.toFile())).execute();
            client = r.getJobClient().orElseThrow();
        } catch (Exception e) {
            return new String[] {"REFUSED", "at submission: " + rootMessage(e)};
        }
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            if (want.equals(lastRows(sink))) {
                client.cancel().get();
                return new String[] {"RESTORED", "the sink's final rows are the spec's (" + want.size() + " keys)"};
            }
            JobStatus s = client.getJobStatus().get();
            if (s.isGloballyTerminalState() || s == JobStatus.FAILING || System.currentTimeMillis() > deadline) {
                String why = "job " + s;
                try {
                    if (s.isGloballyTerminalState() || s == JobStatus.FAILING) {
                        client.getJobExecutionResult().get();
                    } else {
                        client.cancel();
                        why = "timed out after 60 s (job " + s + ")";
                    }
                } catch (Exception e) {
                    return new String[] {"REFUSED", rootMessage(e)};
                }
                return new String[] {"REJECTED", why + "; want last rows " + want + ", sink saw " + lastRows(sink)
                        + " (all output: " + Script.output().get(sink) + ")"};
            }
            Thread.sleep(100);
        }
    }

    /** The last +I/+U row per key (first field) the sink saw, as "c, s" text. */
    static Map<Long, String> lastRows(String sink) {
        Map<Long, String> last = new TreeMap<>();
        for (String row : Script.output().getOrDefault(sink, List.of())) {
            // Row.toString: "+I[3, 3, 105]"
            if (!row.startsWith("+")) {
                continue;
            }
            String body = row.substring(3, row.length() - 1);
            int comma = body.indexOf(", ");
            last.put(Long.parseLong(body.substring(0, comma)), body.substring(comma + 2));
        }
        return last;
    }

    /** judge-plan's rootMessage, of the exception inside any ExecutionException wrapping. */
    static String rootMessage(Throwable e) {
        return PlanJudge.rootMessage(ExceptionUtils.stripExecutionException(e));
    }
}

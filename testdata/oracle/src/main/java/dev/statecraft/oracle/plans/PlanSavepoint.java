package dev.statecraft.oracle.plans;

import dev.statecraft.oracle.common.SavepointDirs;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.PlanReference;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * {@code sql-savepoint OUTDIR NAME PLAN SPEC}: executes any compiled PLAN whose tables are the
 * oracle's scripted sources and collecting sinks (parallelism 1, hashmap backend), feeds the upgrade
 * spec's "before" rows (see {@link PlanJudge}), waits until the script is over and every sink has
 * received exactly the phase's expected rows, and stops the job with a CANONICAL savepoint into
 * {@code OUTDIR/NAME/}. Built for Flink 1.20 as well, so the savepoint an upgrade starts from is
 * written by the old version; {@code judge-plan NEWPLAN SPEC OUTDIR/NAME} then judges the restore.
 *
 * <p>The sources are held open after the script ({@link Script#holdOpen}), so the savepoint's
 * barrier follows every scripted row and the state holds all of them.
 */
final class PlanSavepoint {
    private PlanSavepoint() {}

    static int run(Path outDir, String name, File planFile, File specFile) throws Exception {
        JsonNode plan = new ObjectMapper().readTree(planFile);
        String planVersion = plan.path("flinkVersion").asText("");
        JsonNode spec = new ObjectMapper().readTree(specFile);
        JsonNode before = spec.path("before");
        long settle = spec.path("settleMillis").asLong(200);
        List<Script.Step> steps = new ArrayList<>();
        Map<String, List<String>> want = new TreeMap<>();
        for (JsonNode s : before.path("steps")) {
            if (!s.has("emit") || !s.path("row").isArray()) {
                System.err.println("sql-savepoint: " + specFile + ": \"before\" steps must be emits, got " + s);
                return 2;
            }
            List<Object> fields = new ArrayList<>();
            for (JsonNode f : s.get("row")) {
                fields.add(f.isNull() ? null : f.isIntegralNumber() ? (Object) f.asLong() : f.asText());
            }
            steps.add(Script.Step.emit(s.get("emit").asText(), s.path("kind").asText("+I"), fields));
        }
        if (steps.isEmpty()) {
            System.err.println("sql-savepoint: " + specFile + ": no \"before\" steps");
            return 2;
        }
        PlanJudge.addExpect(PlanJudge.expectFor(before, planVersion), want);

        Files.createDirectories(outDir);
        Path spDir = outDir.resolve(name);
        Script.holdOpen(true);
        Script.install(steps, settle);
        Configuration conf = new Configuration();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 1);
        conf.setString("state.backend.type", "hashmap");
        TableEnvironment tEnv = TableEnvironment.create(
                EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
        TableResult result = tEnv.loadPlan(PlanReference.fromFile(planFile)).execute();
        JobClient client = result.getJobClient().orElseThrow();

        long deadline = System.currentTimeMillis() + 60_000;
        while (!(Script.finished() && sameRows(want, Script.output()))) {
            if (System.currentTimeMillis() > deadline) {
                client.cancel();
                System.err.println("sql-savepoint: after 60 s the sinks hold " + Script.output() + ", want " + want
                        + " (script at step " + Script.cursor() + " of " + steps.size() + ")");
                return 1;
            }
            Thread.sleep(100);
        }
        // Processing-time operators (OVER) emit from timers: give a late extra row a moment to show.
        Thread.sleep(500);
        if (!sameRows(want, Script.output())) {
            client.cancel();
            System.err.println("sql-savepoint: the sinks went on to " + Script.output() + ", want " + want);
            return 1;
        }

        SavepointDirs.stopInto(client, spDir, "plan-savepoint");
        System.err.println("sql-savepoint: " + planFile.getName() + " (flinkVersion " + planVersion + ") saw " + want
                + "; savepoint " + spDir);
        return 0;
    }

    /** Every sink holds exactly the wanted rows (as multisets), and no other sink holds any. */
    private static boolean sameRows(Map<String, List<String>> want, Map<String, List<String>> got) {
        Map<String, List<String>> a = new TreeMap<>();
        want.forEach((k, v) -> { if (!v.isEmpty()) a.put(k, sorted(v)); });
        Map<String, List<String>> b = new TreeMap<>();
        got.forEach((k, v) -> { if (!v.isEmpty()) b.put(k, sorted(v)); });
        return a.equals(b);
    }

    private static List<String> sorted(List<String> l) {
        List<String> c = new ArrayList<>(l);
        c.sort(null);
        return c;
    }
}

package dev.statecraft.oracle.plans;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.PlanReference;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * Oracle command {@code judge-plan PLAN_JSON SPEC_JSON [SAVEPOINT_DIR]}: proves by behaviour that
 * the state TTLs in a compiled plan take effect, or (upgrade spec, below) that a plan restored from
 * a savepoint carries the state on. Flink loads the plan ({@code loadPlan}) and executes it in a local
 * MiniCluster (parallelism 1); the plan's sources must be {@code statecraft-source} tables, which
 * emit the rows the spec scripts, in processing time, and its sinks {@code statecraft-sink}
 * tables, which collect what reaches them. Exit 0 when the collected output is what the spec
 * expects, 1 otherwise (the reason on stderr), 2 on usage errors.
 *
 * <p>Spec JSON:
 *
 * <pre>{@code
 * {
 *   "description": "free text: what the spec proves",
 *   "ttl": {"leftState": "3 s", "rightState": "60 s"},  // documentation only: the TTLs the
 *                                                        // plan must carry to pass (not read)
 *   "settleMillis": 1000,           // optional: pause after every emit (default 1000 ms), so a
 *                                   // row reaches the operators before the next step runs
 *   "steps": [
 *     {"emit": "l", "row": [1, "l1"]},             // one row into source table l (+I)
 *     {"emit": "src", "kind": "-D", "row": [...]}, // row kind +I (default), -U, +U, -D
 *     {"sleep": 7000}                              // wait, in milliseconds
 *   ],
 *   "expect": {"joined": ["+I[1, l2, r1]"]},       // per sink table: the rows it must receive,
 *                                                  // as Flink's Row.toString() with row kind
 *   "ordered": false                               // optional: true compares in arrival order;
 *                                                  // default compares as multisets
 * }
 * }</pre>
 *
 * <p>Upgrade spec ({@code testdata/flink-1.20/upgrades/specs}): {@code {"settleMillis": ..,
 * "before": PHASE, "after": PHASE}}, PHASE = {@code {"steps": [...], "expect": {...},
 * "expectByPlanVersion": {"2.3": {...}}}}. {@code sql-savepoint OUTDIR NAME PLAN SPEC} runs
 * "before" and stops with a savepoint. With SAVEPOINT_DIR the plan is restored from it
 * (non-restored state not allowed) and fed "after": its output must be "after"'s rows (exit 0),
 * else exit 1; exit 3 when Flink refuses to run the plan from the savepoint (its message on
 * stderr). Without SAVEPOINT_DIR the job runs "before" then "after" uninterrupted and must output
 * both phases' rows: the continued job a restored one is compared with. SAVEPOINT_DIR
 * {@code none} feeds "after" to a job that starts empty, which must fail the spec (exit 1): the
 * spec's rows then depend on restored state.
 *
 * <p>State TTL in Flink SQL is processing time measured from the last write of a key, so a spec
 * proves expiry with a sleep well beyond the short TTL and proves retention with a sleep beyond
 * the short TTL but well within the long one (e.g. TTLs 3 s and 60 s, sleeps 7 s). A plan whose
 * TTLs are still {@code 0 ms} (never expire) fails such a spec because the forgotten rows are
 * still there and produce extra output.
 */
public final class PlanJudge {
    private PlanJudge() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 2 && args.length != 3) {
            System.err.println("usage: judge-plan PLAN_JSON SPEC_JSON [SAVEPOINT_DIR]");
            return 2;
        }
        File planFile = new File(args[0]).getAbsoluteFile();
        // SAVEPOINT_DIR "none": feed "after" to a job that starts empty. Its output must differ
        // from "after"'s rows (exit 1), or the spec would pass without any restored state.
        boolean fresh = args.length == 3 && args[2].equals("none");
        File savepoint = args.length == 3 && !fresh ? new File(args[2]).getAbsoluteFile() : null;
        JsonNode plan = new ObjectMapper().readTree(planFile);
        String planVersion = plan.path("flinkVersion").asText("");
        JsonNode spec;
        List<Script.Step> steps = new ArrayList<>();
        Map<String, List<String>> expect = new TreeMap<>();
        long settle;
        boolean ordered;
        try {
            spec = new ObjectMapper().readTree(new File(args[1]));
            settle = spec.path("settleMillis").asLong(1000);
            ordered = spec.path("ordered").asBoolean(false);
            if (spec.has("before") || spec.has("after")) {
                // Upgrade spec: restoring runs only "after"; without a savepoint the job runs both
                // phases uninterrupted, the reference a restored job must equal.
                if (savepoint == null && !fresh) {
                    parseSteps(spec.path("before").path("steps"), steps);
                    addExpect(expectFor(spec.path("before"), planVersion), expect);
                }
                parseSteps(spec.path("after").path("steps"), steps);
                addExpect(expectFor(spec.path("after"), planVersion), expect);
            } else {
                if (savepoint != null || fresh) {
                    throw new IllegalArgumentException("restoring from a savepoint needs a spec with \"before\" and \"after\"");
                }
                parseSteps(spec.path("steps"), steps);
                addExpect(spec.path("expect"), expect);
            }
        } catch (Exception e) {
            System.err.println("judge-plan: bad spec " + args[1] + ": " + e.getMessage());
            return 2;
        }

        System.err.println("judge-plan: state TTLs in " + planFile.getName() + " (flinkVersion " + planVersion
                + "): " + stateTtls(plan));

        long budget = settle * steps.size() + 90_000;
        for (Script.Step s : steps) {
            budget += s.sleepMillis;
        }
        Script.install(steps, settle);
        Thread conductor = new Thread(PlanJudge::conduct, "judge-conductor");
        conductor.setDaemon(true);
        conductor.start();

        Configuration conf = new Configuration();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 1);
        // Flush every record at once: the script's timing, not network buffering, decides when a
        // row reaches an operator.
        conf.set(ExecutionOptions.BUFFER_TIMEOUT, Duration.ZERO);
        if (savepoint != null) {
            // Every piece of the savepoint's state must find its operator in the plan: state that
            // Flink would silently drop is exactly what an upgrade must not lose.
            conf.setString("execution.state-recovery.path", savepoint.toURI().toString());
            conf.setString("execution.state-recovery.ignore-unclaimed-state", "false");
            System.err.println("judge-plan: restoring from " + savepoint + " (non-restored state not allowed)");
        }
        TableEnvironment tEnv =
                TableEnvironment.create(
                        EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
        long started = System.nanoTime();
        TableResult result = null;
        try {
            result = tEnv.loadPlan(PlanReference.fromFile(planFile)).execute();
            result.await(budget, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            result.getJobClient().ifPresent(c -> c.cancel());
            System.err.println("judge-plan: the job did not finish within " + budget + " ms (script at step "
                    + Script.cursor() + " of " + steps.size() + ")");
            return 1;
        } catch (Exception e) {
            if (savepoint == null) {
                throw e;
            }
            System.err.println("judge-plan: REFUSED: Flink did not run the plan from the savepoint: " + rootMessage(e));
            return 3;
        }
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        if (!Script.finished()) {
            System.err.println("judge-plan: the job finished before the script did (step " + Script.cursor()
                    + " of " + steps.size() + "); does the plan read every table the script emits into?");
            return 1;
        }

        Map<String, List<String>> got = Script.output();
        System.err.println("judge-plan: job ran " + tookMs + " ms; output: " + got);
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : expect.entrySet()) {
            List<String> want = e.getValue();
            List<String> have = got.getOrDefault(e.getKey(), List.of());
            if (ordered ? !want.equals(have) : !sorted(want).equals(sorted(have))) {
                problems.add("sink " + e.getKey() + ": want " + want + ", got " + have);
            }
        }
        for (String sink : got.keySet()) {
            if (!expect.containsKey(sink)) {
                problems.add("sink " + sink + " received " + got.get(sink) + " but the spec expects nothing of it");
            }
        }
        if (!problems.isEmpty()) {
            System.err.println("judge-plan: REJECTED: the plan's behaviour does not match the spec"
                    + (savepoint == null ? "" : " (restored, but the state was not carried on as a continued job's)"));
            for (String p : problems) {
                System.err.println("  " + p);
            }
            return 1;
        }
        System.err.println("judge-plan: ACCEPTED" + (savepoint == null ? "" : " (restored, state carried on)") + ": "
                + spec.path("description").asText(""));
        return 0;
    }

    /**
     * A phase's expected sink rows for a plan of the given flinkVersion: {@code expectByPlanVersion}
     * has the rows where that version's planner writes the same result differently (e.g. a delete
     * where the other writes an update-before), {@code expect} the rest.
     */
    static JsonNode expectFor(JsonNode phase, String planVersion) {
        JsonNode byVersion = phase.path("expectByPlanVersion").path(planVersion);
        return byVersion.isObject() ? byVersion : phase.path("expect");
    }

    /** Appends an expect object's rows (sink name to rows) to {@code into}. */
    static void addExpect(JsonNode ex, Map<String, List<String>> into) {
        if (!ex.isObject()) {
            throw new IllegalArgumentException("spec: \"expect\" must be an object of sink name to rows");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = ex.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            List<String> rows = into.computeIfAbsent(e.getKey(), k -> new ArrayList<>());
            for (JsonNode r : e.getValue()) {
                rows.add(r.asText());
            }
        }
    }

    /** The outer message and the root cause, which for a refused restore is Flink's explanation. */
    public static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == e ? String.valueOf(e.getMessage()) : e.getMessage() + " <- " + root.getClass().getSimpleName() + ": " + root.getMessage();
    }

    private static void parseSteps(JsonNode arr, List<Script.Step> steps) {
        if (!arr.isArray() || arr.isEmpty()) {
            throw new IllegalArgumentException("\"steps\" must be a non-empty array");
        }
        int i = 0;
        for (JsonNode s : arr) {
            if (s.has("sleep")) {
                long ms = s.get("sleep").asLong(-1);
                if (ms < 0) {
                    throw new IllegalArgumentException("step " + i + ": sleep must be a non-negative number of ms");
                }
                steps.add(Script.Step.sleep(ms));
            } else if (s.has("emit")) {
                JsonNode row = s.path("row");
                if (!row.isArray()) {
                    throw new IllegalArgumentException("step " + i + ": emit needs a \"row\" array");
                }
                List<Object> fields = new ArrayList<>();
                for (JsonNode f : row) {
                    fields.add(f.isNull() ? null
                            : f.isIntegralNumber() ? (Object) f.asLong()
                            : f.isNumber() ? (Object) f.asDouble()
                            : f.isBoolean() ? (Object) f.asBoolean()
                            : f.asText());
                }
                String kind = s.path("kind").asText("+I");
                if (!List.of("+I", "-U", "+U", "-D").contains(kind)) {
                    throw new IllegalArgumentException("step " + i + ": kind must be +I, -U, +U or -D");
                }
                steps.add(Script.Step.emit(s.get("emit").asText(), kind, fields));
            } else {
                throw new IllegalArgumentException("step " + i + ": want {\"emit\": ...} or {\"sleep\": ...}");
            }
            i++;
        }
    }

    /** Runs the script's sleeps; sources run its emits. */
    private static void conduct() {
        try {
            while (true) {
                Script.Step s = Script.awaitSleep();
                if (s == null) {
                    return;
                }
                Thread.sleep(s.sleepMillis);
                Script.advance();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** "node type/state name=ttl" for every state entry of the plan, for the log. */
    static List<String> stateTtls(JsonNode plan) {
        List<String> out = new ArrayList<>();
        for (JsonNode node : plan.path("nodes")) {
            for (JsonNode st : node.path("state")) {
                out.add(node.path("type").asText() + "/" + st.path("name").asText() + "=" + st.path("ttl").asText());
            }
        }
        return out;
    }

    private static List<String> sorted(List<String> l) {
        List<String> c = new ArrayList<>(l);
        c.sort(null);
        return c;
    }
}

package dev.statecraft.oracle.plans;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The conductor shared by the oracle's scripted sources and collecting sinks.
 *
 * <p>The judge runs Flink in a local MiniCluster inside this JVM, so the source and sink functions
 * reach this class through static state (the user-code class loader delegates to the application
 * class loader for classes on the classpath). A script is a list of steps; each step is either an
 * emit (one row into one named source table) or a sleep. Sources take their own emits in script
 * order; the judge's conductor thread takes the sleeps. After each emit the source waits
 * {@code settleMillis} before handing over, so that a row from one source reaches a join before a
 * row from the other source that follows it in the script.
 */
public final class Script {
    /** One step: an emit into {@link #table} or, when table is null, a sleep of {@link #sleepMillis}. */
    public static final class Step {
        public final String table;
        /** Row kind short string: +I, +U, -U, -D. */
        public final String kind;
        /** Field values as parsed from JSON: Long, Double, String, Boolean or null. */
        public final List<Object> fields;
        public final long sleepMillis;

        private Step(String table, String kind, List<Object> fields, long sleepMillis) {
            this.table = table;
            this.kind = kind;
            this.fields = fields;
            this.sleepMillis = sleepMillis;
        }

        public static Step emit(String table, String kind, List<Object> fields) {
            return new Step(table, kind, fields, 0);
        }

        public static Step sleep(long millis) {
            return new Step(null, null, null, millis);
        }

        @Override
        public String toString() {
            return table == null ? "sleep " + sleepMillis + " ms" : "emit " + table + " " + kind + fields;
        }
    }

    private static final Object LOCK = new Object();
    private static List<Step> steps = Collections.emptyList();
    private static int cursor;
    private static long settleMillis;
    private static final Map<String, List<String>> OUTPUT = new TreeMap<>();
    /** Sources stay up after the script (whatever their after-script option) while this is set. */
    private static volatile boolean holdOpen;

    private Script() {}

    /** Installs a script and clears the collected output. */
    public static void install(List<Step> script, long settle) {
        synchronized (LOCK) {
            steps = new ArrayList<>(script);
            cursor = 0;
            settleMillis = settle;
            OUTPUT.clear();
            LOCK.notifyAll();
        }
    }

    /**
     * Keeps every scripted source running after the script is over, so that a job executed from a
     * plan compiled with the default {@code after-script = finish} can still be stopped with a
     * savepoint; the same plan then finishes normally when it is judged.
     */
    public static void holdOpen(boolean hold) {
        holdOpen = hold;
    }

    public static boolean holdingOpen() {
        return holdOpen;
    }

    public static long settleMillis() {
        synchronized (LOCK) {
            return settleMillis;
        }
    }

    /**
     * Blocks until the step at the cursor is an emit for {@code table} (returns it) or the script
     * is over (returns null). Returns null too when {@code running} turns false.
     */
    public static Step awaitEmit(String table, java.util.function.BooleanSupplier running)
            throws InterruptedException {
        synchronized (LOCK) {
            while (running.getAsBoolean()) {
                if (cursor >= steps.size()) {
                    return null;
                }
                Step s = steps.get(cursor);
                if (table.equals(s.table)) {
                    return s;
                }
                LOCK.wait(100);
            }
            return null;
        }
    }

    /** Blocks until the step at the cursor is a sleep (returns it) or the script is over (null). */
    public static Step awaitSleep() throws InterruptedException {
        synchronized (LOCK) {
            while (true) {
                if (cursor >= steps.size()) {
                    return null;
                }
                Step s = steps.get(cursor);
                if (s.table == null) {
                    return s;
                }
                LOCK.wait(100);
            }
        }
    }

    /** Moves past the step at the cursor. */
    public static void advance() {
        synchronized (LOCK) {
            cursor++;
            LOCK.notifyAll();
        }
    }

    public static boolean finished() {
        synchronized (LOCK) {
            return cursor >= steps.size();
        }
    }

    public static int cursor() {
        synchronized (LOCK) {
            return cursor;
        }
    }

    /** Records one row (Row.toString form, e.g. "+I[1, a]") that reached sink {@code table}. */
    public static void collect(String table, String row) {
        synchronized (LOCK) {
            OUTPUT.computeIfAbsent(table, k -> new ArrayList<>()).add(row);
            LOCK.notifyAll();
        }
    }

    /** A copy of everything collected so far, per sink table. */
    public static Map<String, List<String>> output() {
        synchronized (LOCK) {
            Map<String, List<String>> copy = new TreeMap<>();
            OUTPUT.forEach((k, v) -> copy.put(k, new ArrayList<>(v)));
            return copy;
        }
    }
}

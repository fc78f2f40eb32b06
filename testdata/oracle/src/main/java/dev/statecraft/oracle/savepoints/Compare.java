package dev.statecraft.oracle.savepoints;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import dev.statecraft.oracle.common.Json;

/**
 * Finds the first difference between an expectation and what Flink read. Entries are compared by
 * their slot (state, key, namespace, user key), timers as sets, split list elements as multisets.
 * Within an operator, state contents come first and parallelism last, so a report names the most
 * specific difference. Sizes and checkpoint ids are not compared: a rewritten savepoint may differ.
 */
final class Compare {
    private Compare() {}

    /** Returns null when equal, else a one-line description of the first difference. */
    static String operators(JsonNode expected, JsonNode actual, boolean compareParallelism) {
        Map<String, JsonNode> exp = byField(expected.get("operators"), "uidHash");
        Map<String, JsonNode> act = byField(actual.get("operators"), "uidHash");
        for (Map.Entry<String, JsonNode> e : exp.entrySet()) {
            JsonNode a = act.get(e.getKey());
            String label = label(e.getValue());
            if (a == null) return label + ": expected operator is missing";
            String d = operator(e.getValue(), a, compareParallelism);
            if (d != null) return label + ": " + d;
        }
        for (String h : act.keySet()) {
            if (!exp.containsKey(h)) return label(act.get(h)) + ": operator not in the expectation";
        }
        return null;
    }

    /** Compares savepoint_metadata rows: same operators, parallelism, max parallelism, uid, subtask state count. */
    static String metadata(JsonNode expected, JsonNode actual) {
        Map<String, JsonNode> exp = byField(expected.get("metadata"), "operatorUidHash");
        Map<String, JsonNode> act = byField(actual.get("metadata"), "operatorUidHash");
        for (Map.Entry<String, JsonNode> e : exp.entrySet()) {
            JsonNode a = act.get(e.getKey());
            String label = "metadata row " + e.getKey() + " (" + e.getValue().path("operatorName").asText() + ")";
            if (a == null) return label + ": operator missing from the savepoint";
            for (String f : List.of("operatorUid", "parallelism", "maxParallelism", "subtaskStateCount")) {
                String x = Json.compact(e.getValue().get(f)), y = Json.compact(a.get(f));
                if (!x.equals(y)) return label + ": " + f + ": expected " + x + ", actual " + y;
            }
        }
        for (String h : act.keySet()) {
            if (!exp.containsKey(h)) return "metadata row " + h + " (" + act.get(h).path("operatorName").asText() + "): operator in the savepoint but not in the expectation";
        }
        return null;
    }

    static String label(JsonNode op) {
        return op.get("uid") != null && !op.get("uid").isNull() ? "operator uid " + op.get("uid").asText()
                : "operator uidHash " + op.get("uidHash").asText();
    }

    private static Map<String, JsonNode> byField(JsonNode arr, String field) {
        Map<String, JsonNode> m = new LinkedHashMap<>();
        if (arr != null) for (JsonNode n : arr) m.put(n.path(field).asText(), n);
        return m;
    }

    static String operator(JsonNode e, JsonNode a, boolean compareParallelism) {
        String d = field(e, a, "uid");
        if (d != null) return d;
        Map<String, JsonNode> es = byField(e.get("keyedStates"), "name"), as = byField(a.get("keyedStates"), "name");
        for (Map.Entry<String, JsonNode> s : es.entrySet()) {
            JsonNode x = as.get(s.getKey());
            if (x == null) return "keyed state " + s.getKey() + ": missing";
            d = keyedState(s.getValue(), x);
            if (d != null) return "keyed state " + s.getKey() + ": " + d;
        }
        for (String n : as.keySet()) if (!es.containsKey(n)) return "keyed state " + n + ": not in the expectation";
        d = set("timers", e.get("timers"), a.get("timers"));
        if (d != null) return d;
        Map<String, JsonNode> eo = byField(e.get("operatorStates"), "name"), ao = byField(a.get("operatorStates"), "name");
        for (Map.Entry<String, JsonNode> s : eo.entrySet()) {
            JsonNode x = ao.get(s.getKey());
            if (x == null) return "operator state " + s.getKey() + ": missing";
            for (String f : List.of("mode", "elementType", "keyType")) {
                d = field(s.getValue(), x, f);
                if (d != null) return "operator state " + s.getKey() + ": " + d;
            }
            d = multiset("entries", s.getValue().get("entries"), x.get("entries"));
            if (d != null) return "operator state " + s.getKey() + ": " + d;
        }
        for (String n : ao.keySet()) if (!eo.containsKey(n)) return "operator state " + n + ": not in the expectation";
        if (compareParallelism) {
            for (String f : List.of("maxParallelism", "parallelism")) {
                d = field(e, a, f);
                if (d != null) return d;
            }
        }
        return null;
    }

    private static String field(JsonNode e, JsonNode a, String f) {
        String x = Json.compact(e.get(f)), y = Json.compact(a.get(f));
        return x.equals(y) ? null : f + ": expected " + x + ", actual " + y;
    }

    static String slot(JsonNode entry) {
        return "key " + Json.compact(entry.get("key"))
                + (entry.path("namespace").isNull() ? "" : " namespace " + Json.compact(entry.get("namespace")))
                + (entry.path("userKey").isNull() ? "" : " userKey " + Json.compact(entry.get("userKey")));
    }

    private static String keyedState(JsonNode e, JsonNode a) {
        for (String f : List.of("kind", "keyType", "valueType", "userKeyType", "ttl")) {
            String d = field(e, a, f);
            if (d != null) return d;
        }
        Map<String, String> ev = new TreeMap<>(), av = new TreeMap<>();
        for (JsonNode x : e.get("entries")) ev.put(slot(x), Json.compact(x.get("value")));
        for (JsonNode x : a.get("entries")) av.put(slot(x), Json.compact(x.get("value")));
        for (Map.Entry<String, String> x : ev.entrySet()) {
            String y = av.get(x.getKey());
            if (y == null) return x.getKey() + ": missing (expected value " + x.getValue() + ")";
            if (!y.equals(x.getValue())) return x.getKey() + ": expected value " + x.getValue() + ", actual " + y;
        }
        for (Map.Entry<String, String> y : av.entrySet()) {
            if (!ev.containsKey(y.getKey())) return y.getKey() + ": unexpected entry with value " + y.getValue();
        }
        if (e.get("entries").size() != a.get("entries").size()) {
            return "expected " + e.get("entries").size() + " entries, actual " + a.get("entries").size();
        }
        return null;
    }

    private static String set(String what, JsonNode e, JsonNode a) {
        return multiset(what, e, a);
    }

    private static String multiset(String what, JsonNode e, JsonNode a) {
        Map<String, Integer> count = new HashMap<>();
        for (JsonNode x : e) count.merge(Json.compact(x), 1, Integer::sum);
        for (JsonNode x : a) count.merge(Json.compact(x), -1, Integer::sum);
        List<String> missing = new ArrayList<>(), extra = new ArrayList<>();
        for (Map.Entry<String, Integer> c : new TreeMap<>(count).entrySet()) {
            if (c.getValue() > 0) missing.add(c.getKey());
            if (c.getValue() < 0) extra.add(c.getKey());
        }
        if (!missing.isEmpty()) return what + ": expected " + missing.get(0) + " is missing" + (missing.size() > 1 ? " (and " + (missing.size() - 1) + " more)" : "");
        if (!extra.isEmpty()) return what + ": unexpected " + extra.get(0) + (extra.size() > 1 ? " (and " + (extra.size() - 1) + " more)" : "");
        return null;
    }
}

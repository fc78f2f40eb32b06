package dev.statecraft.oracle.common;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.JsonNodeFactory;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Canonical JSON for fixtures and expectations: object keys sorted, 2-space indent, {@code "k": v}.
 * Jackson (Flink's shaded copy) parses; the writer is ours because Jackson's pretty printer puts a
 * space before the colon and cannot sort keys of a tree it did not build. The compact form (no
 * whitespace, keys sorted) is the "canonical JSON text" used to sort and compare entries.
 */
public final class Json {
    public static final ObjectMapper MAPPER = new ObjectMapper();
    public static final JsonNodeFactory F = JsonNodeFactory.instance;

    private Json() {}

    public static ObjectNode obj() {
        return F.objectNode();
    }

    public static ArrayNode arr() {
        return F.arrayNode();
    }

    public static JsonNode parse(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (IOException e) {
            throw new IllegalArgumentException("invalid JSON: " + e.getMessage(), e);
        }
    }

    public static JsonNode read(Path p) throws IOException {
        try {
            return MAPPER.readTree(Files.readAllBytes(p));
        } catch (IOException e) {
            throw new IOException(p + ": " + e.getMessage(), e);
        }
    }

    public static void write(Path p, JsonNode n) throws IOException {
        Path tmp = p.resolveSibling(p.getFileName() + ".tmp");
        Files.write(tmp, (pretty(n) + "\n").getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, p, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /** Canonical compact text: sorted keys, no whitespace. */
    public static String compact(JsonNode n) {
        StringBuilder sb = new StringBuilder();
        emit(sb, n, -1, 0);
        return sb.toString();
    }

    /** Canonical pretty text: sorted keys, 2-space indent. */
    public static String pretty(JsonNode n) {
        StringBuilder sb = new StringBuilder();
        emit(sb, n, 2, 0);
        return sb.toString();
    }

    private static void newline(StringBuilder sb, int indent, int depth) {
        if (indent < 0) return;
        sb.append('\n');
        for (int i = 0; i < indent * depth; i++) sb.append(' ');
    }

    private static void emit(StringBuilder sb, JsonNode n, int indent, int depth) {
        if (n == null || n.isNull() || n.isMissingNode()) {
            sb.append("null");
        } else if (n.isObject()) {
            List<String> keys = new ArrayList<>();
            for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) keys.add(it.next());
            if (keys.isEmpty()) {
                sb.append("{}");
                return;
            }
            Collections.sort(keys);
            sb.append('{');
            for (int i = 0; i < keys.size(); i++) {
                if (i > 0) sb.append(',');
                newline(sb, indent, depth + 1);
                string(sb, keys.get(i));
                sb.append(indent < 0 ? ":" : ": ");
                emit(sb, n.get(keys.get(i)), indent, depth + 1);
            }
            newline(sb, indent, depth);
            sb.append('}');
        } else if (n.isArray()) {
            if (n.size() == 0) {
                sb.append("[]");
                return;
            }
            sb.append('[');
            for (int i = 0; i < n.size(); i++) {
                if (i > 0) sb.append(',');
                newline(sb, indent, depth + 1);
                emit(sb, n.get(i), indent, depth + 1);
            }
            newline(sb, indent, depth);
            sb.append(']');
        } else if (n.isTextual()) {
            string(sb, n.textValue());
        } else if (n.isFloatingPointNumber()) {
            double d = n.doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new IllegalArgumentException("JSON cannot hold " + d);
            }
            sb.append(Double.toString(d));
        } else {
            // integers, booleans
            sb.append(n.toString());
        }
    }

    private static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                    else sb.append(c);
            }
        }
        sb.append('"');
    }

    /** Sorts the elements of an array node by the given comparator over nodes, in place. */
    public static ArrayNode sorted(ArrayNode a, java.util.Comparator<JsonNode> cmp) {
        List<JsonNode> l = new ArrayList<>();
        a.forEach(l::add);
        l.sort(cmp);
        ArrayNode out = arr();
        l.forEach(out::add);
        return out;
    }

    public static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    public static Map.Entry<String, JsonNode> entry(String k, JsonNode v) {
        return Map.entry(k, v);
    }
}

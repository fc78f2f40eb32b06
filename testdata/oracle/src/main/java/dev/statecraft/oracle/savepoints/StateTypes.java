package dev.statecraft.oracle.savepoints;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

import dev.statecraft.oracle.common.Json;

/**
 * The type names of expectations ("Integer", "Long", "String", "Double", "Float", "Short", "Byte",
 * "Boolean", "Tuple2<A,B>", "Account") mapped to Flink type information, and values to and from
 * JSON. Expectations name types so that the oracle can read a savepoint (or restore a job) from the
 * expectation alone, including one the migrate feature rewrote with a new value type.
 */
public final class StateTypes {
    private StateTypes() {}

    public static TypeInformation<?> info(String name) {
        if (name == null) throw new IllegalArgumentException("missing type name");
        String n = name.replace(" ", "");
        switch (n) {
            case "Integer": return Types.INT;
            case "Long": return Types.LONG;
            case "String": return Types.STRING;
            case "Double": return Types.DOUBLE;
            case "Float": return Types.FLOAT;
            case "Short": return Types.SHORT;
            case "Byte": return Types.BYTE;
            case "Boolean": return Types.BOOLEAN;
            case "Account": return TypeInformation.of(Account.class);
            default:
        }
        if (n.startsWith("Tuple2<") && n.endsWith(">")) {
            List<String> args = splitArgs(n.substring(7, n.length() - 1));
            if (args.size() != 2) throw new IllegalArgumentException("Tuple2 needs 2 type arguments: " + name);
            return Types.TUPLE(info(args.get(0)), info(args.get(1)));
        }
        throw new IllegalArgumentException("unknown type name " + name);
    }

    private static List<String> splitArgs(String s) {
        List<String> out = new ArrayList<>();
        int depth = 0, start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '<') depth++;
            else if (c == '>') depth--;
            else if (c == ',' && depth == 0) {
                out.add(s.substring(start, i));
                start = i + 1;
            }
        }
        out.add(s.substring(start));
        return out;
    }

    public static JsonNode toJson(String type, Object v) {
        if (v == null) return Json.F.nullNode();
        String n = type.replace(" ", "");
        if (n.startsWith("Tuple2<")) {
            List<String> args = splitArgs(n.substring(7, n.length() - 1));
            Tuple2<?, ?> t = (Tuple2<?, ?>) v;
            ObjectNode o = Json.obj();
            o.set("f0", toJson(args.get(0), t.f0));
            o.set("f1", toJson(args.get(1), t.f1));
            return o;
        }
        switch (n) {
            case "Integer": return Json.F.numberNode((Integer) v);
            case "Long": return Json.F.numberNode((Long) v);
            case "Short": return Json.F.numberNode((Short) v);
            case "Byte": return Json.F.numberNode((Byte) v);
            case "Double": return Json.F.numberNode((Double) v);
            case "Float": return Json.F.numberNode((double) (Float) v);
            case "String": return Json.F.textNode((String) v);
            case "Boolean": return Json.F.booleanNode((Boolean) v);
            case "Account": {
                Account a = (Account) v;
                ObjectNode o = Json.obj();
                o.put("owner", a.owner);
                o.put("balance", a.balance);
                o.put("version", a.version);
                return o;
            }
            default: throw new IllegalArgumentException("unknown type name " + type);
        }
    }

    public static Object fromJson(String type, JsonNode j) {
        if (j == null || j.isNull()) return null;
        String n = type.replace(" ", "");
        if (n.startsWith("Tuple2<")) {
            List<String> args = splitArgs(n.substring(7, n.length() - 1));
            return Tuple2.of(fromJson(args.get(0), j.get("f0")), fromJson(args.get(1), j.get("f1")));
        }
        switch (n) {
            case "Integer": return j.intValue();
            case "Long": return j.longValue();
            case "Short": return (short) j.intValue();
            case "Byte": return (byte) j.intValue();
            case "Double": return j.doubleValue();
            case "Float": return (float) j.doubleValue();
            case "String": return j.textValue();
            case "Boolean": return j.booleanValue();
            case "Account": return new Account(Json.text(j, "owner"), j.get("balance").longValue(), j.get("version").intValue());
            default: throw new IllegalArgumentException("unknown type name " + type);
        }
    }
}

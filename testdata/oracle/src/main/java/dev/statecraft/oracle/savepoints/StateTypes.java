package dev.statecraft.oracle.savepoints;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

import dev.statecraft.oracle.common.Json;

/**
 * The type names of expectations ("Integer", "Long", "String", "Double", "Float", "Short", "Byte",
 * "Boolean", "Tuple2<A,B>", "Row<T1,...,Tn>", "Account", "AccountV2", "AccountV3") mapped to Flink
 * type information, and values to and from JSON. Expectations name types so that the oracle can
 * read a savepoint (or restore a job) from the expectation alone, including one the migrate
 * feature rewrote with a new value type.
 *
 * <p>{@code Row<T1,...,Tn>} is {@code Types.ROW(T1, ..., Tn)}: a position-based Row (field names
 * f0..fn-1 in the type, none in the stored data), in JSON the array of its field values in order,
 * {@code null} for a null field. Only RowKind INSERT rows are representable; reading any other kind
 * is an error rather than a silent loss of the kind.
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
            case "AccountV2": return TypeInformation.of(AccountV2.class);
            case "AccountV3": return TypeInformation.of(AccountV3.class);
            default:
        }
        if (n.startsWith("Row<") && n.endsWith(">")) {
            List<String> args = rowArgs(n, name);
            TypeInformation<?>[] fields = new TypeInformation<?>[args.size()];
            for (int i = 0; i < fields.length; i++) fields[i] = info(args.get(i));
            return Types.ROW(fields);
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

    /** The field type names of a Row type name; at least one, none empty. */
    private static List<String> rowArgs(String n, String name) {
        List<String> args = splitArgs(n.substring(4, n.length() - 1));
        for (String a : args) {
            if (a.isEmpty()) throw new IllegalArgumentException("Row needs a type name for every field: " + name);
        }
        return args;
    }

    public static JsonNode toJson(String type, Object v) {
        if (v == null) return Json.F.nullNode();
        String n = type.replace(" ", "");
        if (n.startsWith("Row<")) {
            List<String> args = rowArgs(n, type);
            Row r = (Row) v;
            if (r.getKind() != RowKind.INSERT) {
                throw new IllegalStateException(type + ": row of kind " + r.getKind() + " (expectations hold INSERT rows only): " + r);
            }
            if (r.getArity() != args.size()) {
                throw new IllegalStateException(type + ": row of arity " + r.getArity() + ": " + r);
            }
            ArrayNode a = Json.arr();
            for (int i = 0; i < args.size(); i++) a.add(toJson(args.get(i), r.getField(i)));
            return a;
        }
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
            case "AccountV2": {
                AccountV2 a = (AccountV2) v;
                ObjectNode o = Json.obj();
                o.put("owner", a.owner);
                o.put("balance", a.balance);
                o.put("tier", a.tier);
                return o;
            }
            case "AccountV3": {
                AccountV3 a = (AccountV3) v;
                ObjectNode o = Json.obj();
                o.put("owner", a.owner);
                o.put("balance", a.balance);
                o.put("version", a.version);
                o.put("level", a.level);
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
        if (n.startsWith("Row<")) {
            List<String> args = rowArgs(n, type);
            if (!j.isArray() || j.size() != args.size()) {
                throw new IllegalArgumentException(type + ": expected a JSON array of " + args.size() + " field values, got " + Json.compact(j));
            }
            Row r = new Row(RowKind.INSERT, args.size());
            for (int i = 0; i < args.size(); i++) r.setField(i, fromJson(args.get(i), j.get(i)));
            return r;
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
            case "Account": return new Account(Json.text(j, "owner"), need(type, j, "balance").longValue(), need(type, j, "version").intValue());
            case "AccountV2": return new AccountV2(Json.text(j, "owner"), need(type, j, "balance").longValue(), Json.text(j, "tier"));
            case "AccountV3": {
                JsonNode level = j.get("level");
                return new AccountV3(Json.text(j, "owner"), need(type, j, "balance").longValue(), need(type, j, "version").intValue(),
                        level == null || level.isNull() ? null : level.intValue());
            }
            default: throw new IllegalArgumentException("unknown type name " + type);
        }
    }

    /** A primitive field of a POJO's JSON: it has no null, so a missing one is an error, not 0. */
    private static JsonNode need(String type, JsonNode j, String field) {
        JsonNode v = j.get(field);
        if (v == null || v.isNull()) throw new IllegalArgumentException(type + ": field " + field + " is missing in " + Json.compact(j));
        return v;
    }
}

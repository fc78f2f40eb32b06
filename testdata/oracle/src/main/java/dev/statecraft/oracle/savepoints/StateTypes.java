package dev.statecraft.oracle.savepoints;

import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

import dev.statecraft.oracle.common.Json;

/**
 * The type names of expectations ("Integer", "Long", "String", "Double", "Float", "Short", "Byte",
 * "Boolean", "Character", "TupleN<A,B,...>", "Row<T1,...,Tn>", "List<T>", "Map<K,V>", primitive arrays
 * ("int[]", ...), object arrays ("String[]", "Integer[]", ...), "Account", "AccountV2", "AccountV3") mapped to Flink
 * type information, and values to and from JSON. Expectations name types so that the oracle can
 * read a savepoint (or restore a job) from the expectation alone, including one the migrate
 * feature rewrote with a new value type.
 *
 * <p>{@code Row<T1,...,Tn>} is {@code Types.ROW(T1, ..., Tn)}: a position-based Row (field names
 * f0..fn-1 in the type, none in the stored data), in JSON the array of its field values in order,
 * {@code null} for a null field; a row of another RowKind than INSERT is {@code {"rowKind": "+U",
 * "fields": [...]}} (RowKind.shortString), as statecraft's dump prints it, so that its kind is
 * compared rather than lost.
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
            case "Character": return Types.CHAR;
            case "String[]": return Types.OBJECT_ARRAY(Types.STRING);
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
        TypeInformation<?> prim = PRIMITIVE_ARRAYS.get(n);
        if (prim != null) return prim;
        // Types.OBJECT_ARRAY of a boxed type: GenericArraySerializer (String[] is matched above)
        if (n.endsWith("[]")) return Types.OBJECT_ARRAY(info(n.substring(0, n.length() - 2)));
        List<String> args = generic(n, "Tuple");
        if (args != null) {
            if (n.charAt(5) == '<' || !n.substring(5, n.indexOf('<')).equals(Integer.toString(args.size()))) {
                throw new IllegalArgumentException(name + ": TupleN needs N type arguments");
            }
            TypeInformation<?>[] fields = new TypeInformation<?>[args.size()];
            for (int i = 0; i < fields.length; i++) fields[i] = info(args.get(i));
            return Types.TUPLE(fields);
        }
        if ((args = generic(n, "List<")) != null && args.size() == 1) return Types.LIST(info(args.get(0)));
        if ((args = generic(n, "Map<")) != null && args.size() == 2) return Types.MAP(info(args.get(0)), info(args.get(1)));
        throw new IllegalArgumentException("unknown type name " + name);
    }

    /**
     * Primitive arrays (Types.PRIMITIVE_ARRAY): in JSON an array of the elements, byte[] a base64
     * string (statecraft's dump shows it so).
     */
    private static final java.util.Map<String, TypeInformation<?>> PRIMITIVE_ARRAYS = java.util.Map.of(
            "byte[]", Types.PRIMITIVE_ARRAY(Types.BYTE), "short[]", Types.PRIMITIVE_ARRAY(Types.SHORT),
            "int[]", Types.PRIMITIVE_ARRAY(Types.INT), "long[]", Types.PRIMITIVE_ARRAY(Types.LONG),
            "float[]", Types.PRIMITIVE_ARRAY(Types.FLOAT), "double[]", Types.PRIMITIVE_ARRAY(Types.DOUBLE),
            "boolean[]", Types.PRIMITIVE_ARRAY(Types.BOOLEAN), "char[]", Types.PRIMITIVE_ARRAY(Types.CHAR));

    /** The type arguments of n if it is PREFIX...<..> (PREFIX "Tuple" takes any TupleN), else null. */
    private static List<String> generic(String n, String prefix) {
        if (!n.startsWith(prefix) || !n.endsWith(">") || n.indexOf('<') < 0) return null;
        return splitArgs(n.substring(n.indexOf('<') + 1, n.length() - 1));
    }

    /** A Map value in JSON: [{"key", "value"}] ordered by the key's compact text (a HashMap has no order). */
    private static JsonNode mapJson(String kt, String vt, java.util.Map<?, ?> m) {
        ArrayNode a = Json.arr();
        for (java.util.Map.Entry<?, ?> e : m.entrySet()) {
            ObjectNode o = Json.obj();
            o.set("key", toJson(kt, e.getKey()));
            o.set("value", toJson(vt, e.getValue()));
            a.add(o);
        }
        return Json.sorted(a, java.util.Comparator.comparing((JsonNode o) -> Json.compact(o.get("key"))));
    }

    /** A primitive or object array in JSON: elements in order (null for a null element). */
    private static JsonNode arrayJson(String n, Object v) {
        if (n.equals("byte[]")) return Json.F.textNode(java.util.Base64.getEncoder().encodeToString((byte[]) v));
        ArrayNode a = Json.arr();
        int len = java.lang.reflect.Array.getLength(v);
        String elem = PRIMITIVE_ARRAYS.containsKey(n) ? null : n.substring(0, n.length() - 2);
        for (int i = 0; i < len; i++) {
            Object x = java.lang.reflect.Array.get(v, i);
            if (elem != null) a.add(toJson(elem, x));
            else if (x instanceof Character) a.add(String.valueOf((char) (Character) x));
            else if (x instanceof Boolean) a.add((Boolean) x);
            else if (x instanceof Float) a.add((double) (Float) x);
            else if (x instanceof Double) a.add((Double) x);
            else a.add(((Number) x).longValue());
        }
        return a;
    }

    /** A primitive or object array from JSON. */
    private static Object arrayFromJson(String n, JsonNode j) {
        if (n.equals("byte[]")) return java.util.Base64.getDecoder().decode(j.textValue());
        Class<?> c;
        switch (n) {
            case "short[]": c = short.class; break;
            case "int[]": c = int.class; break;
            case "long[]": c = long.class; break;
            case "float[]": c = float.class; break;
            case "double[]": c = double.class; break;
            case "boolean[]": c = boolean.class; break;
            case "char[]": c = char.class; break;
            default: {
                // an object array: String[], Integer[] ...
                String elem = n.substring(0, n.length() - 2);
                Object[] o = (Object[]) java.lang.reflect.Array.newInstance(info(elem).getTypeClass(), j.size());
                for (int i = 0; i < j.size(); i++) o[i] = fromJson(elem, j.get(i));
                return o;
            }
        }
        Object a = java.lang.reflect.Array.newInstance(c, j.size());
        for (int i = 0; i < j.size(); i++) {
            JsonNode x = j.get(i);
            Object v;
            if (c == char.class) v = x.textValue().charAt(0);
            else if (c == boolean.class) v = x.booleanValue();
            else if (c == float.class) v = (float) x.doubleValue();
            else if (c == double.class) v = x.doubleValue();
            else if (c == long.class) v = x.longValue();
            else if (c == int.class) v = x.intValue();
            else v = (short) x.intValue();
            java.lang.reflect.Array.set(a, i, v);
        }
        return a;
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
            if (r.getArity() != args.size()) {
                throw new IllegalStateException(type + ": row of arity " + r.getArity() + ": " + r);
            }
            ArrayNode a = Json.arr();
            for (int i = 0; i < args.size(); i++) a.add(toJson(args.get(i), r.getField(i)));
            if (r.getKind() == RowKind.INSERT) return a;
            ObjectNode o = Json.obj();
            o.put("rowKind", r.getKind().shortString());
            o.set("fields", a);
            return o;
        }
        List<String> targs = generic(n, "Tuple");
        if (targs != null) {
            org.apache.flink.api.java.tuple.Tuple t = (org.apache.flink.api.java.tuple.Tuple) v;
            ObjectNode o = Json.obj();
            for (int i = 0; i < targs.size(); i++) o.set("f" + i, toJson(targs.get(i), t.getField(i)));
            return o;
        }
        if ((targs = generic(n, "List<")) != null) {
            ArrayNode a = Json.arr();
            for (Object x : (List<?>) v) a.add(toJson(targs.get(0), x));
            return a;
        }
        if ((targs = generic(n, "Map<")) != null) return mapJson(targs.get(0), targs.get(1), (java.util.Map<?, ?>) v);
        if (n.endsWith("[]")) return arrayJson(n, v);
        switch (n) {
            case "Character": return Json.F.textNode(String.valueOf((char) (Character) v));
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
        List<String> targs = generic(n, "Tuple");
        if (targs != null) {
            org.apache.flink.api.java.tuple.Tuple t = org.apache.flink.api.java.tuple.Tuple.newInstance(targs.size());
            for (int i = 0; i < targs.size(); i++) t.setField(fromJson(targs.get(i), j.get("f" + i)), i);
            return t;
        }
        if ((targs = generic(n, "List<")) != null) {
            List<Object> l = new ArrayList<>();
            for (JsonNode x : j) l.add(fromJson(targs.get(0), x));
            return l;
        }
        if ((targs = generic(n, "Map<")) != null) {
            java.util.Map<Object, Object> m = new java.util.HashMap<>();
            for (JsonNode x : j) m.put(fromJson(targs.get(0), x.get("key")), fromJson(targs.get(1), x.get("value")));
            return m;
        }
        if (n.endsWith("[]")) return arrayFromJson(n, j);
        if (n.startsWith("Row<")) {
            List<String> args = rowArgs(n, type);
            RowKind kind = RowKind.INSERT;
            if (j.isObject() && j.size() == 2 && j.has("rowKind") && j.has("fields")) {
                kind = null;
                for (RowKind k : RowKind.values()) {
                    if (k.shortString().equals(j.get("rowKind").asText())) kind = k;
                }
                if (kind == null) throw new IllegalArgumentException(type + ": unknown rowKind in " + Json.compact(j));
                j = j.get("fields");
            }
            if (!j.isArray() || j.size() != args.size()) {
                throw new IllegalArgumentException(type + ": expected a JSON array of " + args.size() + " field values, got " + Json.compact(j));
            }
            Row r = new Row(kind, args.size());
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
            case "Character": return j.textValue().charAt(0);
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

package dev.statecraft.oracle.common;

/**
 * One-line text for the oracle's TSV tables (durations, UIDs): a value may hold tabs, line breaks
 * and NULs, so it is written with {@code \\}, {@code \t}, {@code \n}, {@code \r} and {@code \0}
 * escapes, and input lines are unescaped the same way. The Go tests read the same escapes.
 */
public final class TsvText {
    private TsvText() {}

    public static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\\': b.append("\\\\"); break;
                case '\t': b.append("\\t"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\0': b.append("\\0"); break;
                default: b.append(c);
            }
        }
        return b.toString();
    }

    public static String unescape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(i + 1);
                String r = n == 't' ? "\t" : n == 'n' ? "\n" : n == 'r' ? "\r" : n == '0' ? "\0" : n == '\\' ? "\\" : null;
                if (r != null) {
                    b.append(r);
                    i++;
                    continue;
                }
            }
            b.append(c);
        }
        return b.toString();
    }
}

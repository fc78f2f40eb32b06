package dev.statecraft.oracle.plans;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.flink.util.TimeUtils;

/**
 * Oracle command {@code durations IN_FILE}: Flink's own reading of duration texts, the grammar of
 * the {@code "ttl"} strings in compiled plans.
 *
 * <p>IN_FILE holds one input per line (UTF-8; lines end at LF, CRLF or CR). So that inputs can hold
 * tabs, line breaks and NULs, a line is unescaped first: {@code \t}, {@code \n}, {@code \r},
 * {@code \0} and {@code \\} stand for TAB, LF, CR, NUL and one backslash; any other backslash is
 * kept as it is. For each input one line goes to stdout, tab-separated:
 *
 * <pre>
 *   input  ok     millis                      formatWithHighestUnit(d)  seconds.nanos
 *   input  error  ExceptionClass: message
 * </pre>
 *
 * where {@code d = TimeUtils.parseDuration(input)}, {@code millis} is {@code d.toMillis()} or
 * {@code overflow} when that throws, and {@code seconds.nanos} is the exact value
 * ({@code d.getSeconds()}, a dot, {@code d.getNano()} zero-padded to 9 digits). The input, the
 * formatted text and the message are written escaped the same way, so each result is one line.
 */
public final class Durations {
    private Durations() {}

    public static int run(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: durations IN_FILE");
            return 2;
        }
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        for (String line : lines) {
            out.println(describe(unescape(line)));
        }
        out.flush();
        return 0;
    }

    /** One result line for one input. */
    static String describe(String input) {
        Duration d;
        try {
            d = TimeUtils.parseDuration(input);
        } catch (RuntimeException e) {
            return escape(input) + "\terror\t" + escape(e.getClass().getName() + ": " + e.getMessage());
        }
        String millis;
        try {
            millis = Long.toString(d.toMillis());
        } catch (ArithmeticException e) {
            millis = "overflow";
        }
        String formatted;
        try {
            formatted = escape(TimeUtils.formatWithHighestUnit(d));
        } catch (RuntimeException e) {
            formatted = escape("!" + e.getClass().getName() + ": " + e.getMessage());
        }
        return escape(input) + "\tok\t" + millis + "\t" + formatted + "\t"
                + d.getSeconds() + "." + String.format("%09d", d.getNano());
    }

    static String escape(String s) {
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

    static String unescape(String s) {
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

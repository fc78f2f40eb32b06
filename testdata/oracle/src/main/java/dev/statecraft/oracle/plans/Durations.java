package dev.statecraft.oracle.plans;

import dev.statecraft.oracle.common.TsvText;

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
            out.println(describe(TsvText.unescape(line)));
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
            return TsvText.escape(input) + "\terror\t" + TsvText.escape(e.getClass().getName() + ": " + e.getMessage());
        }
        String millis;
        try {
            millis = Long.toString(d.toMillis());
        } catch (ArithmeticException e) {
            millis = "overflow";
        }
        String formatted;
        try {
            formatted = TsvText.escape(TimeUtils.formatWithHighestUnit(d));
        } catch (RuntimeException e) {
            formatted = TsvText.escape("!" + e.getClass().getName() + ": " + e.getMessage());
        }
        return TsvText.escape(input) + "\tok\t" + millis + "\t" + formatted + "\t"
                + d.getSeconds() + "." + String.format("%09d", d.getNano());
    }
}

package dev.statecraft.oracle.metadata;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.runtime.OperatorIDGenerator;

/**
 * Oracle command {@code uid-hashes IN_FILE}: the OperatorID Flink 2.3.0 derives from each UID.
 *
 * <p>IN_FILE holds one UID per line (UTF-8; lines end at LF, CRLF or CR). So that UIDs can hold
 * tabs, line breaks and NULs, a line is unescaped first: {@code \t}, {@code \n}, {@code \r},
 * {@code \0} and {@code \\} stand for TAB, LF, CR, NUL and one backslash; any other backslash is
 * kept. Empty lines are skipped (Flink refuses an empty UID). For each UID one line goes to stdout:
 *
 * <pre>
 *   escaped-uid TAB 32-hex-operator-id
 * </pre>
 *
 * where the hex is {@code OperatorIdentifier.forUid(uid).getOperatorId().toHexString()}, the
 * State Processor API's reading of a UID. The command also asks {@code OperatorIDGenerator.fromUid}
 * (the same hash as the job graph's user-specified operator hash) and fails if the two disagree.
 */
public final class UidHashes {
    private UidHashes() {}

    public static int run(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: uid-hashes IN_FILE");
            return 2;
        }
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        int lineNo = 0;
        for (String line : lines) {
            lineNo++;
            if (line.isEmpty()) {
                continue;
            }
            String uid = unescape(line);
            String viaIdentifier = OperatorIdentifier.forUid(uid).getOperatorId().toHexString();
            String viaGenerator = OperatorIDGenerator.fromUid(uid).toHexString();
            if (!viaIdentifier.equals(viaGenerator)) {
                System.err.println("uid-hashes: line " + lineNo + ": OperatorIdentifier.forUid gives "
                        + viaIdentifier + " but OperatorIDGenerator.fromUid gives " + viaGenerator);
                return 1;
            }
            out.println(escape(uid) + "\t" + viaIdentifier);
        }
        out.flush();
        return 0;
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

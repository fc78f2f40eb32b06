package dev.statecraft.oracle.metadata;

import dev.statecraft.oracle.common.TsvText;

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
            String uid = TsvText.unescape(line);
            String viaIdentifier = OperatorIdentifier.forUid(uid).getOperatorId().toHexString();
            String viaGenerator = OperatorIDGenerator.fromUid(uid).toHexString();
            if (!viaIdentifier.equals(viaGenerator)) {
                System.err.println("uid-hashes: line " + lineNo + ": OperatorIdentifier.forUid gives "
                        + viaIdentifier + " but OperatorIDGenerator.fromUid gives " + viaGenerator);
                return 1;
            }
            out.println(TsvText.escape(uid) + "\t" + viaIdentifier);
        }
        out.flush();
        return 0;
    }
}

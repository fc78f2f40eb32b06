package dev.statecraft.oracle;

import java.util.Arrays;

/** Entry point of statecraft's oracle: dispatches to one job per command. */
public final class Main {
    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: run.sh COMMAND [ARGS...]; see testdata/README.md");
            System.exit(2);
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "version":
                System.out.println(org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
                break;
            default:
                System.err.println("unknown oracle command: " + args[0]);
                System.exit(2);
        }
        System.exit(0);
    }
}

# Rewrites that make the shared 2.x sources compile against Flink 1.12.x (run.sh applies them to
# every file of sources.txt). Each names the API difference it bridges.

# The 1.12 build runs only as one command per JVM (fixtures), never served: every job gets its own
# local MiniCluster (common.Cluster is left out: it needs flink-test-utils).
/^import dev\.statecraft\.oracle\.common\.Cluster;/d
s/^\( *\)Cluster\.startShared();/\1\/\/ no shared cluster in the 1.12 build/
s/Cluster\.afterCommand(log)/0/

# 1.12's JobClient.stopWithSavepoint has no format argument (1.15 added SavepointFormatType; a
# 1.12 savepoint is always canonical).
/^import org\.apache\.flink\.core\.execution\.SavepointFormatType;/d
s/, SavepointFormatType\.CANONICAL)/)/

# kafka-clients 2.4.1 (the client of Flink 1.12's connector) has no constant for the admin API
# timeout (2.5 added it); by name the setting is only logged as unknown, as it is in 2.4.
s/AdminClientConfig\.DEFAULT_API_TIMEOUT_MS_CONFIG/"default.api.timeout.ms"/

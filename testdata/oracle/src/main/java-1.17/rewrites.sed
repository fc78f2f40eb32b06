# Rewrites that make the shared 2.x sources compile against Flink 1.17.x (run.sh applies them to
# every file of sources.txt). Each names the API difference it bridges.

# 1.17 has no sink-v2 DiscardingSink (1.18 added it): the legacy SinkFunction one does the same.
s/org\.apache\.flink\.streaming\.api\.functions\.sink\.v2\.DiscardingSink/org.apache.flink.streaming.api.functions.sink.DiscardingSink/g
s/\.sinkTo(new DiscardingSink<>())/.addSink(new DiscardingSink<>())/g

# The 1.17 build runs only as one command per JVM (fixtures), never served: every job gets its own
# local MiniCluster, which is what common.Cluster gives there too (it is left out: it needs
# flink-test-utils, which this build does not resolve).
/^import dev\.statecraft\.oracle\.common\.Cluster;/d
s/Cluster\.stream(/StreamExecutionEnvironment.createLocalEnvironment(/g
s/^\( *\)Cluster\.startShared();/\1\/\/ no shared cluster in the 1.17 build/
s/Cluster\.afterCommand(log)/0/

# Rewrites that make the shared 2.x sources compile against Flink 1.17.x (run.sh applies them to
# every file of sources.txt). Each names the API difference it bridges.

# 1.17 has no sink-v2 DiscardingSink (1.18 added it): the legacy SinkFunction one does the same.
s/org\.apache\.flink\.streaming\.api\.functions\.sink\.v2\.DiscardingSink/org.apache.flink.streaming.api.functions.sink.DiscardingSink/g
s/\.sinkTo(new DiscardingSink<>())/.addSink(new DiscardingSink<>())/g

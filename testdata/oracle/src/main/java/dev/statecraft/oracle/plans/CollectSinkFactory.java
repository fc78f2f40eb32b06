package dev.statecraft.oracle.plans;

import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.streaming.api.functions.sink.legacy.RichSinkFunction;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.RuntimeConverter;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.legacy.SinkFunctionProvider;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.DataType;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * Table sink {@code 'connector' = 'statecraft-sink'}: records every row it receives, with its
 * row kind, into {@link Script#collect} under the table's object name. Option
 * {@code changelog-mode}: {@code all} (default: accepts whatever the query produces, including
 * update-before), {@code upsert} (no update-before; needs a primary key), {@code insert}, or
 * {@code no-update-before} (every kind but update-before, no key needed: what Flink's
 * {@code blackhole} sink asks for, so a plan compiled against this sink has the operators, and the
 * same generate-update-before choices, as the catalogue's plan against blackhole).
 */
public final class CollectSinkFactory implements DynamicTableSinkFactory {
    public static final String IDENTIFIER = "statecraft-sink";

    static final ConfigOption<String> CHANGELOG_MODE =
            ConfigOptions.key("changelog-mode").stringType().defaultValue("all");

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Collections.emptySet();
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        Set<ConfigOption<?>> s = new HashSet<>();
        s.add(CHANGELOG_MODE);
        return s;
    }

    @Override
    public DynamicTableSink createDynamicTableSink(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        helper.validate();
        String mode = helper.getOptions().get(CHANGELOG_MODE);
        if (!mode.equals("all") && !mode.equals("upsert") && !mode.equals("insert")
                && !mode.equals("no-update-before")) {
            throw new ValidationException(
                    "changelog-mode must be all, upsert, insert or no-update-before, got " + mode);
        }
        if (mode.equals("upsert") && context.getPrimaryKeyIndexes().length == 0) {
            throw new ValidationException("changelog-mode upsert needs a PRIMARY KEY");
        }
        return new CollectSink(
                context.getObjectIdentifier().getObjectName(), context.getPhysicalRowDataType(), mode);
    }

    static final class CollectSink implements DynamicTableSink {
        private final String table;
        private final DataType rowType;
        private final String mode;

        CollectSink(String table, DataType rowType, String mode) {
            this.table = table;
            this.rowType = rowType;
            this.mode = mode;
        }

        @Override
        public ChangelogMode getChangelogMode(ChangelogMode requested) {
            switch (mode) {
                case "insert":
                    return ChangelogMode.insertOnly();
                case "upsert":
                case "no-update-before":
                    ChangelogMode.Builder b = ChangelogMode.newBuilder();
                    for (RowKind k : requested.getContainedKinds()) {
                        if (k != RowKind.UPDATE_BEFORE) {
                            b.addContainedKind(k);
                        }
                    }
                    return b.build();
                default:
                    return requested;
            }
        }

        @Override
        public SinkRuntimeProvider getSinkRuntimeProvider(Context ctx) {
            return SinkFunctionProvider.of(
                    new CollectSinkFunction(table, ctx.createDataStructureConverter(rowType)));
        }

        @Override
        public DynamicTableSink copy() {
            return new CollectSink(table, rowType, mode);
        }

        @Override
        public String asSummaryString() {
            return IDENTIFIER;
        }
    }

    static final class CollectSinkFunction extends RichSinkFunction<RowData> {
        private final String table;
        private final DynamicTableSink.DataStructureConverter converter;

        CollectSinkFunction(String table, DynamicTableSink.DataStructureConverter converter) {
            this.table = table;
            this.converter = converter;
        }

        @Override
        public void open(OpenContext openContext) throws Exception {
            converter.open(RuntimeConverter.Context.create(getClass().getClassLoader()));
        }

        @Override
        public void invoke(RowData value, Context context) {
            Row row = (Row) converter.toExternal(value);
            row.setKind(value.getRowKind());
            Script.collect(table, row.toString());
        }
    }
}

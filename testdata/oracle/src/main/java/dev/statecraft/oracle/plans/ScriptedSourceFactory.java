package dev.statecraft.oracle.plans;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.legacy.table.connector.source.SourceFunctionProvider;
import org.apache.flink.streaming.api.functions.source.legacy.RichSourceFunction;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.RuntimeConverter;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.functions.LookupFunction;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

/**
 * Table source {@code 'connector' = 'statecraft-source'}: emits the rows that the current
 * {@link Script} assigns to this table (by the table's object name), in script order and in
 * processing time. Options:
 *
 * <ul>
 *   <li>{@code changelog-mode}: {@code insert} (default) or {@code upsert} (needs a primary key;
 *       makes the planner add ChangelogNormalize where downstream needs update-before rows);
 *   <li>{@code after-script}: {@code finish} (default: the source ends when the script is over, so
 *       the job finishes) or {@code idle} (the source stays up until cancelled, for savepoints).
 * </ul>
 *
 * <p>It is also a {@link LookupTableSource} (answering every lookup with no rows) so that the
 * catalogue can compile lookup joins against it.
 */
public final class ScriptedSourceFactory implements DynamicTableSourceFactory {
    public static final String IDENTIFIER = "statecraft-source";

    static final ConfigOption<String> CHANGELOG_MODE =
            ConfigOptions.key("changelog-mode").stringType().defaultValue("insert");
    static final ConfigOption<String> AFTER_SCRIPT =
            ConfigOptions.key("after-script").stringType().defaultValue("finish");

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
        s.add(AFTER_SCRIPT);
        return s;
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        helper.validate();
        String mode = helper.getOptions().get(CHANGELOG_MODE);
        String after = helper.getOptions().get(AFTER_SCRIPT);
        if (!mode.equals("insert") && !mode.equals("upsert")) {
            throw new ValidationException("changelog-mode must be insert or upsert, got " + mode);
        }
        if (!after.equals("finish") && !after.equals("idle")) {
            throw new ValidationException("after-script must be finish or idle, got " + after);
        }
        if (mode.equals("upsert") && context.getPrimaryKeyIndexes().length == 0) {
            throw new ValidationException("changelog-mode upsert needs a PRIMARY KEY");
        }
        return new ScriptedTableSource(
                context.getObjectIdentifier().getObjectName(),
                context.getPhysicalRowDataType(),
                mode.equals("upsert"),
                after.equals("idle"));
    }

    static final class ScriptedTableSource implements ScanTableSource, LookupTableSource {
        private final String table;
        private final DataType rowType;
        private final boolean upsert;
        private final boolean idleAfterScript;

        ScriptedTableSource(String table, DataType rowType, boolean upsert, boolean idleAfterScript) {
            this.table = table;
            this.rowType = rowType;
            this.upsert = upsert;
            this.idleAfterScript = idleAfterScript;
        }

        @Override
        public ChangelogMode getChangelogMode() {
            return upsert ? ChangelogMode.upsert() : ChangelogMode.insertOnly();
        }

        @Override
        public ScanRuntimeProvider getScanRuntimeProvider(ScanContext ctx) {
            DataStructureConverter converter = ctx.createDataStructureConverter(rowType);
            List<LogicalType> types = new ArrayList<>(rowType.getLogicalType().getChildren());
            return SourceFunctionProvider.of(
                    new ScriptedSourceFunction(table, types, converter, idleAfterScript), false);
        }

        @Override
        public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext ctx) {
            return LookupFunctionProvider.of(new NoRowsLookup());
        }

        @Override
        public DynamicTableSource copy() {
            return new ScriptedTableSource(table, rowType, upsert, idleAfterScript);
        }

        @Override
        public String asSummaryString() {
            return IDENTIFIER;
        }
    }

    /** Lookup function of the catalogue's dimension tables: no row matches. */
    static final class NoRowsLookup extends LookupFunction {
        @Override
        public Collection<RowData> lookup(RowData keyRow) {
            return Collections.emptyList();
        }
    }

    static final class ScriptedSourceFunction extends RichSourceFunction<RowData> {
        private final String table;
        private final List<LogicalType> types;
        private final DynamicTableSource.DataStructureConverter converter;
        private final boolean idleAfterScript;
        private volatile boolean running = true;

        ScriptedSourceFunction(
                String table,
                List<LogicalType> types,
                DynamicTableSource.DataStructureConverter converter,
                boolean idleAfterScript) {
            this.table = table;
            this.types = types;
            this.converter = converter;
            this.idleAfterScript = idleAfterScript;
        }

        @Override
        public void open(OpenContext openContext) throws Exception {
            converter.open(RuntimeConverter.Context.create(getClass().getClassLoader()));
        }

        @Override
        public void run(SourceContext<RowData> ctx) throws Exception {
            while (running) {
                Script.Step step = Script.awaitEmit(table, () -> running);
                if (step == null) {
                    break;
                }
                RowData row = (RowData) converter.toInternal(toRow(step));
                synchronized (ctx.getCheckpointLock()) {
                    ctx.collect(row);
                }
                Thread.sleep(Script.settleMillis());
                Script.advance();
            }
            while (running && (idleAfterScript || Script.holdingOpen())) {
                Thread.sleep(50);
            }
        }

        private Row toRow(Script.Step step) {
            if (step.fields.size() != types.size()) {
                throw new IllegalArgumentException(
                        "script row for table " + table + " has " + step.fields.size()
                                + " fields, the table has " + types.size() + ": " + step);
            }
            Row row = new Row(kindOf(step.kind), types.size());
            for (int i = 0; i < types.size(); i++) {
                row.setField(i, convert(step.fields.get(i), types.get(i), i));
            }
            return row;
        }

        private static RowKind kindOf(String shortString) {
            for (RowKind k : RowKind.values()) {
                if (k.shortString().equals(shortString)) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown row kind " + shortString + ", want +I, -U, +U or -D");
        }

        private Object convert(Object v, LogicalType type, int field) {
            if (v == null) {
                return null;
            }
            switch (type.getTypeRoot()) {
                case INTEGER:
                    return ((Number) v).intValue();
                case BIGINT:
                    return ((Number) v).longValue();
                case DOUBLE:
                    return ((Number) v).doubleValue();
                case BOOLEAN:
                    return (Boolean) v;
                case CHAR:
                case VARCHAR:
                    return (String) v;
                case TIMESTAMP_WITHOUT_TIME_ZONE:
                    return LocalDateTime.parse((String) v);
                case DECIMAL:
                    // A string ("12.50") or a number, as BigDecimal: the converter fits it to the
                    // column's precision and scale.
                    return new BigDecimal(v.toString());
                default:
                    throw new IllegalArgumentException(
                            "table " + table + " field " + field + ": type " + type
                                    + " is not supported by the scripted source");
            }
        }

        @Override
        public void cancel() {
            running = false;
        }
    }
}

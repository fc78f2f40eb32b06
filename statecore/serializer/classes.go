package serializer

// Snapshot classes with a payload of their own (checked with javap against the 2.3.0 jars).
const (
	classList          = "org.apache.flink.api.common.typeutils.base.ListSerializerSnapshot"
	classArrayList     = "org.apache.flink.runtime.state.ArrayListSerializerSnapshot"
	classMap           = "org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot"
	classSet           = "org.apache.flink.api.common.typeutils.base.SetSerializerSnapshot"
	classTuple         = "org.apache.flink.api.java.typeutils.runtime.TupleSerializerSnapshot"
	classRow           = "org.apache.flink.api.java.typeutils.runtime.RowSerializer$RowSerializerSnapshot"
	classGenericArray  = "org.apache.flink.api.common.typeutils.base.GenericArraySerializerSnapshot"
	classNullable      = "org.apache.flink.api.java.typeutils.runtime.NullableSerializer$NullableSerializerSnapshot"
	classTtl           = "org.apache.flink.runtime.state.ttl.TtlStateFactory$TtlSerializerSnapshot"
	classTtlV2         = "org.apache.flink.runtime.state.v2.ttl.TtlStateFactory$TtlSerializerSnapshot"
	classTimer         = "org.apache.flink.streaming.api.operators.TimerSerializerSnapshot"
	classTwoPhaseState = "org.apache.flink.streaming.api.functions.sink.legacy.TwoPhaseCommitSinkFunction$StateSerializerSnapshot"
	classLinkedList    = "org.apache.flink.table.runtime.typeutils.LinkedListSerializer$LinkedListSerializerSnapshot"
	classExternal      = "org.apache.flink.table.runtime.typeutils.ExternalSerializer$ExternalSerializerSnapshot"
	classPojo          = "org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot"
	classEnum          = "org.apache.flink.api.common.typeutils.base.EnumSerializer$EnumSerializerSnapshot"
	classValue         = "org.apache.flink.api.java.typeutils.runtime.ValueSerializer$ValueSerializerSnapshot"
	classCopyableValue = "org.apache.flink.api.java.typeutils.runtime.CopyableValueSerializer$CopyableValueSerializerSnapshot"
	classRowData       = "org.apache.flink.table.runtime.typeutils.RowDataSerializer$RowDataSerializerSnapshot"
	classKryo          = "org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot"
	classDecimalData   = "org.apache.flink.table.runtime.typeutils.DecimalDataSerializer$DecimalSerializerSnapshot"
	classTimestampData = "org.apache.flink.table.runtime.typeutils.TimestampDataSerializer$TimestampDataSerializerSnapshot"
	classBinaryRowData = "org.apache.flink.table.runtime.typeutils.BinaryRowDataSerializer$BinaryRowDataSerializerSnapshot"
	classArrayData     = "org.apache.flink.table.runtime.typeutils.ArrayDataSerializer$ArrayDataSerializerSnapshot"
	classMapData       = "org.apache.flink.table.runtime.typeutils.MapDataSerializer$MapDataSerializerSnapshot"
	classSortedMap     = "org.apache.flink.table.runtime.typeutils.SortedMapSerializerSnapshot"
	classRawValueData  = "org.apache.flink.table.runtime.typeutils.RawValueDataSerializer$RawValueDataSerializerSnapshot"
)

// compositeClasses are the CompositeTypeSerializerSnapshot subclasses of the 2.3.0 jars.
var compositeClasses = map[string]bool{
	classList: true, classArrayList: true, classMap: true, classSet: true, classTuple: true,
	classRow: true, classGenericArray: true, classNullable: true, classTtl: true, classTtlV2: true,
	classTimer: true, classTwoPhaseState: true, classLinkedList: true, classExternal: true,
	"org.apache.flink.api.common.typeutils.SingleThreadAccessCheckingTypeSerializer$SingleThreadAccessCheckingTypeSerializerSnapshot": true,
	"org.apache.flink.api.java.typeutils.runtime.JavaEitherSerializerSnapshot":                                                        true,
	"org.apache.flink.streaming.api.datastream.CoGroupedStreams$UnionSerializerSnapshot":                                              true,
	"org.apache.flink.streaming.api.operators.co.IntervalJoinOperator$BufferEntrySerializerSnapshot":                                  true,
	"org.apache.flink.streaming.runtime.streamrecord.StreamElementSerializer$StreamElementSerializerSnapshot":                         true,
	"org.apache.flink.table.dataview.ListViewSerializerSnapshot":                                                                      true,
	"org.apache.flink.table.dataview.MapViewSerializerSnapshot":                                                                       true,
	"org.apache.flink.table.dataview.NullAwareMapSerializerSnapshot":                                                                  true,
	"org.apache.flink.table.runtime.sequencedmultisetstate.linked.MetaSqnInfoSerializer$MetaSqnInfoSerializerSnapshot":                true,
	"org.apache.flink.table.runtime.sequencedmultisetstate.linked.NodeSerializer$NodeSerializerSnapshot":                              true,
	"org.apache.flink.table.runtime.sequencedmultisetstate.linked.RowSqnInfoSerializer$RowSqnInfoSerializerSnapshot":                  true,
	classRawValueData: true,
	"org.apache.flink.table.runtime.typeutils.WindowKeySerializer$WindowKeySerializerSnapshot": true,
}

// kindOf maps a snapshot class to its payload layout; ok is false for a class whose payload this
// package cannot read (and therefore cannot skip).
func kindOf(class string) (Kind, bool) {
	switch {
	case simpleClasses[class]:
		return KindSimple, true
	case compositeClasses[class]:
		return KindComposite, true
	}
	switch class {
	case classPojo:
		return KindPojo, true
	case classValue, classCopyableValue:
		return KindGeneric, true
	case classEnum:
		return KindEnum, true
	case classRowData:
		return KindRowData, true
	case classKryo:
		return KindKryo, true
	case classDecimalData:
		return KindDecimalData, true
	case classTimestampData:
		return KindTimestampData, true
	case classBinaryRowData:
		return KindBinaryRowData, true
	case classArrayData, classMapData:
		return KindJavaObjects, true
	case classSortedMap:
		return KindSortedMap, true
	}
	return 0, false
}

package dsfake

import (
	"bytes"
	"cmp"
	"math"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/protobuf/proto"
)

// maxEntityBytes is the largest entity the service stores: 1 MiB less 4 bytes
// (source: "Limits", Firestore in Datastore mode documentation).
const maxEntityBytes = 1<<20 - 4

// rank orders value types as Firestore does: null, boolean, number (integer and
// double together), timestamp, string, blob, key, geo point, array, entity.
func rank(v *pb.Value) int {
	switch v.GetValueType().(type) {
	case *pb.Value_NullValue:
		return 0
	case *pb.Value_BooleanValue:
		return 1
	case *pb.Value_IntegerValue, *pb.Value_DoubleValue:
		return 2
	case *pb.Value_TimestampValue:
		return 3
	case *pb.Value_StringValue:
		return 4
	case *pb.Value_BlobValue:
		return 5
	case *pb.Value_KeyValue:
		return 6
	case *pb.Value_GeoPointValue:
		return 7
	case *pb.Value_ArrayValue:
		return 8
	default:
		return 9
	}
}

// compareValues is a total order on values: by rank, then within the type.
func compareValues(a, b *pb.Value) int {
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	switch rank(a) {
	case 1:
		return cmp.Compare(b2i(a.GetBooleanValue()), b2i(b.GetBooleanValue()))
	case 2:
		return compareNumbers(a, b)
	case 3:
		x, y := a.GetTimestampValue(), b.GetTimestampValue()
		if c := cmp.Compare(x.GetSeconds(), y.GetSeconds()); c != 0 {
			return c
		}
		return cmp.Compare(x.GetNanos(), y.GetNanos())
	case 4:
		return cmp.Compare(a.GetStringValue(), b.GetStringValue())
	case 5:
		return bytes.Compare(a.GetBlobValue(), b.GetBlobValue())
	case 6:
		return compareKeys(a.GetKeyValue(), b.GetKeyValue())
	case 7:
		x, y := a.GetGeoPointValue(), b.GetGeoPointValue()
		if c := cmp.Compare(x.GetLatitude(), y.GetLatitude()); c != 0 {
			return c
		}
		return cmp.Compare(x.GetLongitude(), y.GetLongitude())
	case 8:
		x, y := a.GetArrayValue().GetValues(), b.GetArrayValue().GetValues()
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := compareValues(x[i], y[i]); c != 0 {
				return c
			}
		}
		return cmp.Compare(len(x), len(y))
	case 9:
		mo := proto.MarshalOptions{Deterministic: true}
		x, _ := mo.Marshal(a.GetEntityValue())
		y, _ := mo.Marshal(b.GetEntityValue())
		return bytes.Compare(x, y)
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compareNumbers compares integers and doubles by numeric value, NaN first.
func compareNumbers(a, b *pb.Value) int {
	ai, aInt := a.GetValueType().(*pb.Value_IntegerValue)
	bi, bInt := b.GetValueType().(*pb.Value_IntegerValue)
	if aInt && bInt {
		return cmp.Compare(ai.IntegerValue, bi.IntegerValue)
	}
	x, y := num(a), num(b)
	if math.IsNaN(x) || math.IsNaN(y) {
		return cmp.Compare(b2i(!math.IsNaN(x)), b2i(!math.IsNaN(y)))
	}
	return cmp.Compare(x, y)
}

func num(v *pb.Value) float64 {
	if i, ok := v.GetValueType().(*pb.Value_IntegerValue); ok {
		return float64(i.IntegerValue)
	}
	return v.GetDoubleValue()
}

// indexed returns the index entries of e's property name: its value, or each
// element of an array value, leaving out values excluded from indexes. A
// missing or wholly excluded property has none, so it matches no filter or order.
func indexed(e *pb.Entity, name string) []*pb.Value {
	if name == "__key__" {
		return []*pb.Value{{ValueType: &pb.Value_KeyValue{KeyValue: e.Key}}}
	}
	v, ok := e.GetProperties()[name]
	if !ok {
		return nil
	}
	if arr, ok := v.GetValueType().(*pb.Value_ArrayValue); ok {
		var out []*pb.Value
		for _, el := range arr.ArrayValue.GetValues() {
			if !el.GetExcludeFromIndexes() {
				out = append(out, el)
			}
		}
		return out
	}
	if v.GetExcludeFromIndexes() {
		return nil
	}
	return []*pb.Value{v}
}

// checkEntity enforces the service's limits on an entity being written.
func checkEntity(e *pb.Entity) error {
	if proto.Size(e) > maxEntityBytes {
		return invalid("entity is too big")
	}
	for name, v := range e.GetProperties() {
		if name == "" {
			return invalid("A property name must not be empty.")
		}
		if reserved(name) {
			return invalid("The property name %q is reserved.", name)
		}
		if err := checkValue(name, v, false); err != nil {
			return err
		}
	}
	return nil
}

func checkValue(name string, v *pb.Value, inArray bool) error {
	switch x := v.GetValueType().(type) {
	case *pb.Value_ArrayValue:
		if inArray {
			return invalid("The property %q holds an array inside an array.", name)
		}
		for _, el := range x.ArrayValue.GetValues() {
			if err := checkValue(name, el, true); err != nil {
				return err
			}
		}
	case *pb.Value_StringValue:
		if !v.GetExcludeFromIndexes() && len(x.StringValue) > maxNameBytes {
			return invalid("The value of property %q is longer than %d bytes.", name, maxNameBytes)
		}
	case *pb.Value_BlobValue:
		if !v.GetExcludeFromIndexes() && len(x.BlobValue) > maxNameBytes {
			return invalid("The value of property %q is longer than %d bytes.", name, maxNameBytes)
		}
	case *pb.Value_EntityValue:
		for sub, sv := range x.EntityValue.GetProperties() {
			if err := checkValue(name+"."+sub, sv, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// truncateTimes rounds every timestamp in e down to the microsecond, the
// precision the service stores (source: google.datastore.v1.Value,
// timestamp_value: "When stored in the Datastore, precise only to
// microseconds").
func truncateTimes(e *pb.Entity) {
	for _, v := range e.GetProperties() {
		truncateValue(v)
	}
}

func truncateValue(v *pb.Value) {
	switch x := v.GetValueType().(type) {
	case *pb.Value_TimestampValue:
		x.TimestampValue.Nanos -= x.TimestampValue.Nanos % 1000
	case *pb.Value_ArrayValue:
		for _, el := range x.ArrayValue.GetValues() {
			truncateValue(el)
		}
	case *pb.Value_EntityValue:
		truncateTimes(x.EntityValue)
	}
}

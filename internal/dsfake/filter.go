package dsfake

import (
	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
)

// checkFilter validates a query filter before it runs.
func checkFilter(f *pb.Filter) error {
	switch x := f.GetFilterType().(type) {
	case nil:
		return nil
	case *pb.Filter_CompositeFilter:
		cf := x.CompositeFilter
		if cf.Op != pb.CompositeFilter_AND && cf.Op != pb.CompositeFilter_OR {
			return invalid("A composite filter needs the AND or OR operator.")
		}
		if len(cf.Filters) == 0 {
			return invalid("A composite filter needs at least one filter.")
		}
		for _, sub := range cf.Filters {
			if err := checkFilter(sub); err != nil {
				return err
			}
		}
		return nil
	case *pb.Filter_PropertyFilter:
		pf := x.PropertyFilter
		name := pf.GetProperty().GetName()
		if name == "" || pf.Value == nil {
			return invalid("A property filter needs a property and a value.")
		}
		switch pf.Op {
		case pb.PropertyFilter_IN, pb.PropertyFilter_NOT_IN:
			if pf.Value.GetArrayValue() == nil {
				return invalid("The IN and NOT_IN operators take an array value.")
			}
		case pb.PropertyFilter_HAS_ANCESTOR:
			if name != "__key__" || pf.Value.GetKeyValue() == nil {
				return invalid("HAS_ANCESTOR filters __key__ with a key value.")
			}
		case pb.PropertyFilter_EQUAL, pb.PropertyFilter_NOT_EQUAL, pb.PropertyFilter_LESS_THAN,
			pb.PropertyFilter_LESS_THAN_OR_EQUAL, pb.PropertyFilter_GREATER_THAN, pb.PropertyFilter_GREATER_THAN_OR_EQUAL:
		default:
			return invalid("Unknown property filter operator %v.", pf.Op)
		}
		if name == "__key__" && pf.Op != pb.PropertyFilter_IN && pf.Op != pb.PropertyFilter_NOT_IN &&
			pf.Value.GetKeyValue() == nil {
			return invalid("A __key__ filter takes a key value.")
		}
		return nil
	}
	return invalid("unknown filter type")
}

// matches reports whether e satisfies f (nil matches everything).
func matches(e *pb.Entity, f *pb.Filter) bool {
	switch x := f.GetFilterType().(type) {
	case nil:
		return true
	case *pb.Filter_CompositeFilter:
		and := x.CompositeFilter.Op == pb.CompositeFilter_AND
		for _, sub := range x.CompositeFilter.Filters {
			if matches(e, sub) != and {
				return !and
			}
		}
		return and
	case *pb.Filter_PropertyFilter:
		return matchProperty(e, x.PropertyFilter)
	}
	return false
}

// matchProperty evaluates one property filter against e's index entries: a
// multi-valued property matches when any value does, and != and NOT_IN need the
// property to be present with no value equal to the operand.
func matchProperty(e *pb.Entity, pf *pb.PropertyFilter) bool {
	if pf.Op == pb.PropertyFilter_HAS_ANCESTOR {
		return hasAncestor(e.Key, pf.Value.GetKeyValue())
	}
	vals := indexed(e, pf.GetProperty().GetName())
	fv := pf.Value
	in := func(v *pb.Value) bool {
		for _, el := range fv.GetArrayValue().GetValues() {
			if compareValues(v, el) == 0 {
				return true
			}
		}
		return false
	}
	switch pf.Op {
	case pb.PropertyFilter_NOT_EQUAL, pb.PropertyFilter_NOT_IN:
		if len(vals) == 0 {
			return false
		}
		for _, v := range vals {
			if (pf.Op == pb.PropertyFilter_NOT_EQUAL && compareValues(v, fv) == 0) ||
				(pf.Op == pb.PropertyFilter_NOT_IN && in(v)) {
				return false
			}
		}
		return true
	}
	for _, v := range vals {
		var ok bool
		switch pf.Op {
		case pb.PropertyFilter_EQUAL:
			ok = compareValues(v, fv) == 0
		case pb.PropertyFilter_IN:
			ok = in(v)
		default:
			if rank(v) != rank(fv) {
				continue
			}
			c := compareValues(v, fv)
			switch pf.Op {
			case pb.PropertyFilter_LESS_THAN:
				ok = c < 0
			case pb.PropertyFilter_LESS_THAN_OR_EQUAL:
				ok = c <= 0
			case pb.PropertyFilter_GREATER_THAN:
				ok = c > 0
			case pb.PropertyFilter_GREATER_THAN_OR_EQUAL:
				ok = c >= 0
			}
		}
		if ok {
			return true
		}
	}
	return false
}

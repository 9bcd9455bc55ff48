package dsfake

import (
	"bytes"
	"context"
	"slices"
	"time"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// maxBatch is the most results one RunQuery answer carries; the client fetches
// the rest with the end cursor.
const maxBatch = 500

var cursorPrefix = []byte("dsfake1:")

// order is one effective sort order of a query.
type order struct {
	prop string
	desc bool
}

// row is one matching entity and its position in the query's order.
type row struct {
	e   *stored
	pos []*pb.Value
}

func unimplemented(what string) error {
	return status.Errorf(codes.Unimplemented, "dsfake: %s is not supported", what)
}

// RunQuery implements the Datastore RunQuery RPC for the queries the package doc
// lists.
func (s *Server) RunQuery(_ context.Context, req *pb.RunQueryRequest) (*pb.RunQueryResponse, error) {
	db, err := dbOf(req.ProjectId, req.DatabaseId)
	if err != nil {
		return nil, err
	}
	q := req.GetQuery()
	switch {
	case q == nil:
		return nil, unimplemented("GQL")
	case req.ExplainOptions != nil:
		return nil, unimplemented("query explain")
	case len(req.GetPropertyMask().GetPaths()) > 0:
		return nil, unimplemented("a property mask")
	case len(q.DistinctOn) > 0 || q.FindNearest != nil:
		return nil, unimplemented("distinct-on and find-nearest")
	case len(q.Kind) > 1:
		return nil, invalid("A query may name at most one kind.")
	}
	keysOnly := false
	for _, p := range q.Projection {
		if p.GetProperty().GetName() != "__key__" {
			return nil, unimplemented("projection other than keys-only")
		}
		keysOnly = true
	}
	if err := checkFilter(q.Filter); err != nil {
		return nil, err
	}
	if p := req.GetPartitionId(); p.GetProjectId() != "" && p.GetProjectId() != db.project {
		return nil, invalid("mismatched projects: %q and %q", p.GetProjectId(), db.project)
	}
	orders := effectiveOrders(q)
	start, err := decodeCursor(q.StartCursor, len(orders))
	if err != nil {
		return nil, err
	}
	end, err := decodeCursor(q.EndCursor, len(orders))
	if err != nil {
		return nil, err
	}

	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	t, newID, err := st.readTxn(db, req.ReadOptions)
	if err != nil {
		return nil, err
	}
	d := st.db(db)
	ns := req.GetPartitionId().GetNamespaceId()
	var rows []row
	for _, e := range d.entities {
		k := e.entity.Key
		if k.GetPartitionId().GetNamespaceId() != ns ||
			(len(q.Kind) == 1 && kindOf(k) != q.Kind[0].GetName()) || !matches(e.entity, q.Filter) {
			continue
		}
		if pos, ok := position(e.entity, orders); ok {
			rows = append(rows, row{e: e, pos: pos})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return comparePos(a.pos, b.pos, orders) })
	if start != nil {
		rows = slices.DeleteFunc(rows, func(r row) bool { return comparePos(r.pos, start, orders) <= 0 })
	}
	cutByEnd := false
	if end != nil {
		n := len(rows)
		rows = slices.DeleteFunc(rows, func(r row) bool { return comparePos(r.pos, end, orders) > 0 })
		cutByEnd = len(rows) < n
	}

	batch := &pb.QueryResultBatch{
		EntityResultType: pb.EntityResult_FULL,
		SnapshotVersion:  st.version,
		ReadTime:         ts(time.Now()),
		EndCursor:        q.StartCursor,
	}
	if keysOnly {
		batch.EntityResultType = pb.EntityResult_KEY_ONLY
	}
	skip := min(int(q.Offset), len(rows))
	if skip > 0 {
		batch.SkippedResults = int32(skip)
		batch.SkippedCursor = encodeCursor(rows[skip-1].pos)
		batch.EndCursor = batch.SkippedCursor
		rows = rows[skip:]
	}
	n, limited := min(len(rows), maxBatch), false
	if q.Limit != nil && int(q.Limit.Value) < n {
		n, limited = max(int(q.Limit.Value), 0), true
	}
	for _, r := range rows[:n] {
		st.noteRead(t, d, keyString(r.e.entity.Key))
		batch.EntityResults = append(batch.EntityResults, st.result(r.e, r.e.entity.Key, keysOnly))
		batch.EndCursor = encodeCursor(r.pos)
		batch.EntityResults[len(batch.EntityResults)-1].Cursor = batch.EndCursor
	}
	switch {
	case n < len(rows) && limited:
		batch.MoreResults = pb.QueryResultBatch_MORE_RESULTS_AFTER_LIMIT
	case n < len(rows):
		batch.MoreResults = pb.QueryResultBatch_NOT_FINISHED
	case cutByEnd:
		batch.MoreResults = pb.QueryResultBatch_MORE_RESULTS_AFTER_CURSOR
	default:
		batch.MoreResults = pb.QueryResultBatch_NO_MORE_RESULTS
	}
	return &pb.RunQueryResponse{Batch: batch, Transaction: newID}, nil
}

// effectiveOrders is the query's order, then its inequality properties not
// already ordered, then the key, in the direction of the last order.
func effectiveOrders(q *pb.Query) []order {
	var out []order
	has := map[string]bool{}
	for _, o := range q.Order {
		name := o.GetProperty().GetName()
		if !has[name] {
			out = append(out, order{prop: name, desc: o.Direction == pb.PropertyOrder_DESCENDING})
			has[name] = true
		}
	}
	for _, name := range inequalityProps(q.Filter) {
		if !has[name] {
			out = append(out, order{prop: name})
			has[name] = true
		}
	}
	if !has["__key__"] {
		desc := len(out) > 0 && out[len(out)-1].desc
		out = append(out, order{prop: "__key__", desc: desc})
	}
	return out
}

func inequalityProps(f *pb.Filter) []string {
	switch x := f.GetFilterType().(type) {
	case *pb.Filter_CompositeFilter:
		var out []string
		for _, sub := range x.CompositeFilter.GetFilters() {
			out = append(out, inequalityProps(sub)...)
		}
		return out
	case *pb.Filter_PropertyFilter:
		switch x.PropertyFilter.Op {
		case pb.PropertyFilter_LESS_THAN, pb.PropertyFilter_LESS_THAN_OR_EQUAL, pb.PropertyFilter_GREATER_THAN,
			pb.PropertyFilter_GREATER_THAN_OR_EQUAL, pb.PropertyFilter_NOT_EQUAL, pb.PropertyFilter_NOT_IN:
			return []string{x.PropertyFilter.GetProperty().GetName()}
		}
	}
	return nil
}

// position is e's sort key under orders: per order its least (ascending) or
// greatest (descending) indexed value. An entity with no value for an ordered
// property is not in the index, so it is not a result.
func position(e *pb.Entity, orders []order) ([]*pb.Value, bool) {
	pos := make([]*pb.Value, len(orders))
	for i, o := range orders {
		vals := indexed(e, o.prop)
		if len(vals) == 0 {
			return nil, false
		}
		best := vals[0]
		for _, v := range vals[1:] {
			if c := compareValues(v, best); (c < 0 && !o.desc) || (c > 0 && o.desc) {
				best = v
			}
		}
		pos[i] = best
	}
	return pos, true
}

func comparePos(a, b []*pb.Value, orders []order) int {
	for i, o := range orders {
		c := compareValues(a[i], b[i])
		if o.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func encodeCursor(pos []*pb.Value) []byte {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.ArrayValue{Values: pos})
	return append(bytes.Clone(cursorPrefix), b...)
}

func decodeCursor(c []byte, n int) ([]*pb.Value, error) {
	if len(c) == 0 {
		return nil, nil
	}
	var arr pb.ArrayValue
	if !bytes.HasPrefix(c, cursorPrefix) || proto.Unmarshal(c[len(cursorPrefix):], &arr) != nil || len(arr.Values) != n {
		return nil, invalid("The query cursor is invalid or does not belong to this query.")
	}
	return arr.Values, nil
}

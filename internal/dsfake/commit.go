package dsfake

import (
	"context"
	"time"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// write is one planned mutation.
type write struct {
	m      *pb.Mutation
	key    *pb.Key // normalized and complete
	ks     string
	minted bool // the key's id was allocated by this commit
	entity *pb.Entity
}

// Commit implements the Datastore Commit RPC: transactional commits are
// validated for serializability (see the package doc) and every commit is
// atomic. AbortCommits and DropCommitResponses act here.
func (s *Server) Commit(_ context.Context, req *pb.CommitRequest) (*pb.CommitResponse, error) {
	db, err := dbOf(req.ProjectId, req.DatabaseId)
	if err != nil {
		return nil, err
	}
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	t, id, err := st.commitTxn(db, req)
	if err != nil {
		return nil, err
	}
	if t != nil && s.f.takeAbort() {
		st.finish(id, true)
		return nil, errContention
	}
	writes, err := st.plan(db, req)
	if err != nil {
		st.finish(id, false)
		return nil, err
	}
	d := st.db(db)
	if t != nil {
		if t.readOnly && len(writes) > 0 {
			st.finish(id, false)
			return nil, invalid("Cannot modify entities in a read-only transaction.")
		}
		if st.conflict(t, d) {
			st.finish(id, true)
			return nil, errContention
		}
	}
	resp, err := st.apply(d, writes)
	if err != nil {
		st.finish(id, false)
		return nil, err
	}
	st.finish(id, false)
	if t != nil {
		resp.CommitTime = ts(time.Now())
	}
	if code, drop := s.f.takeDrop(); drop {
		return nil, status.Errorf(code, "dsfake: commit applied but its response was dropped (fault injection)")
	}
	return resp, nil
}

// commitTxn resolves a commit's transaction: nil for a non-transactional commit,
// else the open transaction (a single-use one begins here) and its id.
func (st *store) commitTxn(db dbID, req *pb.CommitRequest) (*txn, []byte, error) {
	switch sel := req.TransactionSelector.(type) {
	case nil:
		if req.Mode != pb.CommitRequest_NON_TRANSACTIONAL {
			return nil, nil, invalid("A transactional commit needs a transaction.")
		}
		return nil, nil, nil
	case *pb.CommitRequest_Transaction:
		if req.Mode == pb.CommitRequest_NON_TRANSACTIONAL {
			return nil, nil, invalid("A non-transactional commit must not name a transaction.")
		}
		t, err := st.open(db, sel.Transaction)
		return t, sel.Transaction, err
	case *pb.CommitRequest_SingleUseTransaction:
		id, err := st.begin(db, sel.SingleUseTransaction)
		if err != nil {
			return nil, nil, err
		}
		return st.txns[string(id)], id, nil
	}
	return nil, nil, invalid("unknown transaction selector")
}

// plan validates a commit's mutations and mints ids for incomplete keys.
func (st *store) plan(db dbID, req *pb.CommitRequest) ([]write, error) {
	writes := make([]write, 0, len(req.Mutations))
	seen := map[string]bool{}
	for _, m := range req.Mutations {
		if len(m.GetPropertyTransforms()) > 0 || len(m.GetPropertyMask().GetPaths()) > 0 {
			return nil, status.Error(codes.Unimplemented, "dsfake: property transforms and masks are not supported")
		}
		if _, ok := m.ConflictDetectionStrategy.(*pb.Mutation_UpdateTime); ok {
			return nil, status.Error(codes.Unimplemented, "dsfake: update_time conflict detection is not supported")
		}
		w := write{m: m}
		var raw *pb.Key
		switch op := m.Operation.(type) {
		case *pb.Mutation_Insert:
			w.entity = op.Insert
		case *pb.Mutation_Update:
			w.entity = op.Update
		case *pb.Mutation_Upsert:
			w.entity = op.Upsert
		case *pb.Mutation_Delete:
			raw = op.Delete
		default:
			return nil, invalid("A mutation needs an operation.")
		}
		if w.entity != nil {
			if err := checkEntity(w.entity); err != nil {
				return nil, err
			}
			raw = w.entity.GetKey()
		}
		_, isUpdate := m.Operation.(*pb.Mutation_Update)
		k, err := normKey(db, raw, w.entity != nil && !isUpdate)
		if err != nil {
			return nil, err
		}
		if incomplete(k) {
			k, w.minted = st.allocate(k), true
		}
		w.key, w.ks = k, keyString(k)
		if req.Mode == pb.CommitRequest_NON_TRANSACTIONAL && seen[w.ks] {
			return nil, invalid("A non-transactional commit may not contain multiple mutations affecting the same entity.")
		}
		seen[w.ks] = true
		writes = append(writes, w)
	}
	return writes, nil
}

// apply performs writes in order, all or nothing, as one new store version.
func (st *store) apply(d *database, writes []write) (*pb.CommitResponse, error) {
	version, now := st.version+1, time.Now()
	overlay := map[string]*stored{}
	cur := func(ks string) *stored {
		if e, ok := overlay[ks]; ok {
			return e
		}
		return d.entities[ks]
	}
	resp := &pb.CommitResponse{MutationResults: make([]*pb.MutationResult, len(writes))}
	for i, w := range writes {
		old := cur(w.ks)
		res := &pb.MutationResult{}
		if w.minted {
			res.Key = w.key
		}
		resp.MutationResults[i] = res
		if bv, ok := w.m.ConflictDetectionStrategy.(*pb.Mutation_BaseVersion); ok {
			v := int64(0)
			if old != nil {
				v = old.version
			}
			if v != bv.BaseVersion {
				res.ConflictDetected, res.Version = true, v
				continue
			}
		}
		switch w.m.Operation.(type) {
		case *pb.Mutation_Insert:
			if old != nil {
				return nil, status.Errorf(codes.AlreadyExists, "entity already exists: %s", keyDebug(w.key))
			}
		case *pb.Mutation_Update:
			if old == nil {
				return nil, status.Errorf(codes.NotFound, "no entity to update: %s", keyDebug(w.key))
			}
		case *pb.Mutation_Delete:
			overlay[w.ks] = nil
			res.Version = version
			continue
		}
		e := proto.Clone(w.entity).(*pb.Entity)
		e.Key = w.key
		truncateTimes(e)
		created := now
		if old != nil {
			created = old.created
		}
		overlay[w.ks] = &stored{entity: e, version: version, created: created, updated: now}
		res.Version, res.CreateTime, res.UpdateTime = version, ts(created), ts(now)
		for name := range e.GetProperties() {
			resp.IndexUpdates += int32(len(indexed(e, name)))
		}
	}
	if len(writes) > 0 {
		st.version = version
	}
	for ks, e := range overlay {
		d.modified[ks] = version
		if e == nil {
			delete(d.entities, ks)
		} else {
			d.entities[ks] = e
		}
	}
	return resp, nil
}

package dsfake

import (
	"context"
	"time"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// dbOf validates a request's project and database ids.
func dbOf(project, database string) (dbID, error) {
	if project == "" {
		return dbID{}, invalid("The project_id field is required.")
	}
	if database == "(default)" {
		return dbID{}, invalid("'(default)' is not allowed as database_id; use the empty string for the default database.")
	}
	return dbID{project: project, database: database}, nil
}

// Lookup implements the Datastore Lookup RPC, including new_transaction read
// options (begin-later transactions).
func (s *Server) Lookup(_ context.Context, req *pb.LookupRequest) (*pb.LookupResponse, error) {
	if len(req.GetPropertyMask().GetPaths()) > 0 {
		return nil, status.Error(codes.Unimplemented, "dsfake: property masks are not supported")
	}
	db, err := dbOf(req.ProjectId, req.DatabaseId)
	if err != nil {
		return nil, err
	}
	if len(req.Keys) == 0 {
		return nil, invalid("A lookup needs at least one key.")
	}
	keys := make([]*pb.Key, len(req.Keys))
	for i, k := range req.Keys {
		if keys[i], err = normKey(db, k, false); err != nil {
			return nil, err
		}
	}
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	t, newID, err := st.readTxn(db, req.ReadOptions)
	if err != nil {
		return nil, err
	}
	d := st.db(db)
	resp := &pb.LookupResponse{Transaction: newID, ReadTime: ts(time.Now())}
	seen := map[string]bool{}
	for _, k := range keys {
		ks := keyString(k)
		if seen[ks] {
			continue
		}
		seen[ks] = true
		st.noteRead(t, d, ks)
		if e, ok := d.entities[ks]; ok {
			resp.Found = append(resp.Found, st.result(e, k, false))
		} else {
			resp.Missing = append(resp.Missing, st.result(nil, k, false))
		}
	}
	return resp, nil
}

// BeginTransaction implements the Datastore BeginTransaction RPC.
func (s *Server) BeginTransaction(_ context.Context, req *pb.BeginTransactionRequest) (*pb.BeginTransactionResponse, error) {
	db, err := dbOf(req.ProjectId, req.DatabaseId)
	if err != nil {
		return nil, err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	id, err := s.st.begin(db, req.TransactionOptions)
	if err != nil {
		return nil, err
	}
	return &pb.BeginTransactionResponse{Transaction: id}, nil
}

// Rollback implements the Datastore Rollback RPC. Rolling back a transaction
// whose commit aborted succeeds; a committed or unknown one is
// codes.InvalidArgument.
func (s *Server) Rollback(_ context.Context, req *pb.RollbackRequest) (*pb.RollbackResponse, error) {
	db, err := dbOf(req.ProjectId, req.DatabaseId)
	if err != nil {
		return nil, err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if err := s.st.rollback(db, req.Transaction); err != nil {
		return nil, err
	}
	return &pb.RollbackResponse{}, nil
}

// AllocateIds implements the Datastore AllocateIds RPC.
func (s *Server) AllocateIds(_ context.Context, req *pb.AllocateIdsRequest) (*pb.AllocateIdsResponse, error) {
	db, err := dbOf(req.ProjectId, req.DatabaseId)
	if err != nil {
		return nil, err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	out := make([]*pb.Key, len(req.Keys))
	for i, k := range req.Keys {
		n, err := normKey(db, k, true)
		if err != nil {
			return nil, err
		}
		if !incomplete(n) {
			return nil, invalid("AllocateIds takes incomplete keys; %s is complete.", keyDebug(n))
		}
		out[i] = s.st.allocate(n)
	}
	return &pb.AllocateIdsResponse{Keys: out}, nil
}

// ReserveIds implements the Datastore ReserveIds RPC: ids are never reused, so
// it only validates the keys.
func (s *Server) ReserveIds(_ context.Context, req *pb.ReserveIdsRequest) (*pb.ReserveIdsResponse, error) {
	db, err := dbOf(req.ProjectId, req.DatabaseId)
	if err != nil {
		return nil, err
	}
	for _, k := range req.Keys {
		if _, err := normKey(db, k, false); err != nil {
			return nil, err
		}
	}
	return &pb.ReserveIdsResponse{}, nil
}

// allocate returns a copy of the incomplete key k with a fresh numeric id.
func (st *store) allocate(k *pb.Key) *pb.Key {
	st.nextID++
	c := proto.Clone(k).(*pb.Key)
	c.Path[len(c.Path)-1].IdType = &pb.Key_PathElement_Id{Id: st.nextID}
	return c
}

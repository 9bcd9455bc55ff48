package dsfake_test

import (
	"context"
	"strings"
	"testing"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/oncegate/oncegate/internal/dsfake"
)

// rawClient talks to the fake without the client library's own checks.
func rawClient(t *testing.T, srv *dsfake.Server) pb.DatastoreClient {
	t.Helper()
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return pb.NewDatastoreClient(conn)
}

func nameKey(kind, name string) *pb.Key {
	return &pb.Key{Path: []*pb.Key_PathElement{{Kind: kind, IdType: &pb.Key_PathElement_Name{Name: name}}}}
}

func TestRawRequestsRefused(t *testing.T) {
	srv := dsfake.Start(t)
	c := rawClient(t, srv)
	ctx := context.Background()
	long := strings.Repeat("x", 1501)
	upsert := func(props map[string]*pb.Value) *pb.CommitRequest {
		return &pb.CommitRequest{ProjectId: "p", Mode: pb.CommitRequest_NON_TRANSACTIONAL,
			Mutations: []*pb.Mutation{{Operation: &pb.Mutation_Upsert{Upsert: &pb.Entity{Key: nameKey("K", "a"), Properties: props}}}}}
	}
	cases := []struct {
		name string
		call func() error
		code codes.Code
	}{
		{"long indexed string", func() error {
			_, err := c.Commit(ctx, upsert(map[string]*pb.Value{"s": {ValueType: &pb.Value_StringValue{StringValue: long}}}))
			return err
		}, codes.InvalidArgument},
		{"long unindexed string", func() error {
			_, err := c.Commit(ctx, upsert(map[string]*pb.Value{"s": {ValueType: &pb.Value_StringValue{StringValue: long}, ExcludeFromIndexes: true}}))
			return err
		}, codes.OK},
		{"reserved property", func() error {
			_, err := c.Commit(ctx, upsert(map[string]*pb.Value{"__p__": {ValueType: &pb.Value_IntegerValue{IntegerValue: 1}}}))
			return err
		}, codes.InvalidArgument},
		{"no project", func() error {
			_, err := c.Lookup(ctx, &pb.LookupRequest{Keys: []*pb.Key{nameKey("K", "a")}})
			return err
		}, codes.InvalidArgument},
		{"(default) database id", func() error {
			_, err := c.Lookup(ctx, &pb.LookupRequest{ProjectId: "p", DatabaseId: "(default)", Keys: []*pb.Key{nameKey("K", "a")}})
			return err
		}, codes.InvalidArgument},
		{"unknown transaction", func() error {
			_, err := c.Commit(ctx, &pb.CommitRequest{ProjectId: "p", TransactionSelector: &pb.CommitRequest_Transaction{Transaction: []byte("nope")}})
			return err
		}, codes.InvalidArgument},
		{"transactional commit without transaction", func() error {
			_, err := c.Commit(ctx, &pb.CommitRequest{ProjectId: "p"})
			return err
		}, codes.InvalidArgument},
		{"GQL", func() error {
			_, err := c.RunQuery(ctx, &pb.RunQueryRequest{ProjectId: "p", QueryType: &pb.RunQueryRequest_GqlQuery{GqlQuery: &pb.GqlQuery{QueryString: "SELECT *"}}})
			return err
		}, codes.Unimplemented},
		{"write in read-only transaction", func() error {
			bt, err := c.BeginTransaction(ctx, &pb.BeginTransactionRequest{ProjectId: "p",
				TransactionOptions: &pb.TransactionOptions{Mode: &pb.TransactionOptions_ReadOnly_{ReadOnly: &pb.TransactionOptions_ReadOnly{}}}})
			if err != nil {
				return err
			}
			req := upsert(nil)
			req.Mode, req.TransactionSelector = pb.CommitRequest_TRANSACTIONAL, &pb.CommitRequest_Transaction{Transaction: bt.Transaction}
			_, err = c.Commit(ctx, req)
			return err
		}, codes.InvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); status.Code(err) != tc.code {
				t.Fatalf("err = %v, want code %v", err, tc.code)
			}
		})
	}
}

func TestBaseVersionConflict(t *testing.T) {
	srv := dsfake.Start(t)
	c := rawClient(t, srv)
	ctx := context.Background()
	put := func(base int64) *pb.MutationResult {
		t.Helper()
		resp, err := c.Commit(ctx, &pb.CommitRequest{ProjectId: "p", Mode: pb.CommitRequest_NON_TRANSACTIONAL,
			Mutations: []*pb.Mutation{{Operation: &pb.Mutation_Upsert{Upsert: &pb.Entity{Key: nameKey("K", "a")}},
				ConflictDetectionStrategy: &pb.Mutation_BaseVersion{BaseVersion: base}}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.MutationResults[0]
	}
	first := put(0)
	if first.ConflictDetected {
		t.Fatal("insert at base version 0 conflicted")
	}
	if r := put(0); !r.ConflictDetected || r.Version != first.Version {
		t.Errorf("stale base version: %+v, want a conflict at version %d", r, first.Version)
	}
	if r := put(first.Version); r.ConflictDetected || r.Version <= first.Version {
		t.Errorf("current base version: %+v, want applied past %d", r, first.Version)
	}
}

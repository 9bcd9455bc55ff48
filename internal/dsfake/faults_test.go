package dsfake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/datastore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/oncegate/oncegate/internal/dsfake"
)

func TestAbortCommits(t *testing.T) {
	cases := []struct {
		aborts  int
		wantErr bool
		commits int
	}{{0, false, 1}, {2, false, 3}, {3, true, 3}}
	for _, tc := range cases {
		srv := dsfake.Start(t)
		c := srv.Client(t, "")
		k := datastore.NameKey("K", "a", nil)
		srv.AbortCommits(tc.aborts)
		_, err := c.RunInTransaction(context.Background(), func(tx *datastore.Transaction) error {
			_, err := tx.Put(k, &rec{N: 1})
			return err
		}, datastore.MaxAttempts(3))
		if tc.wantErr != errors.Is(err, datastore.ErrConcurrentTransaction) || (!tc.wantErr && err != nil) {
			t.Errorf("aborts %d: err = %v, want aborted %v", tc.aborts, err, tc.wantErr)
		}
		if got := srv.Count(dsfake.MethodCommit); got != tc.commits {
			t.Errorf("aborts %d: %d commits, want %d", tc.aborts, got, tc.commits)
		}
		if applied := c.Get(context.Background(), k, &rec{}) == nil; applied == tc.wantErr {
			t.Errorf("aborts %d: applied = %v", tc.aborts, applied)
		}
	}
}

// TestDropCommitResponses shows what a caller sees when a commit applied but its
// answer was lost: with Unavailable the client library retries the commit and
// gets InvalidArgument for the finished transaction; with DeadlineExceeded it
// does not retry. Either way the write is in.
func TestDropCommitResponses(t *testing.T) {
	cases := []struct {
		code     codes.Code
		wantCode codes.Code
		commits  int
	}{
		{codes.OK, codes.InvalidArgument, 2},
		{codes.Unavailable, codes.InvalidArgument, 2},
		{codes.DeadlineExceeded, codes.DeadlineExceeded, 1},
	}
	for _, tc := range cases {
		t.Run(tc.code.String(), func(t *testing.T) {
			srv := dsfake.Start(t)
			c := srv.Client(t, "")
			ctx := context.Background()
			k := datastore.NameKey("K", "a", nil)
			srv.DropCommitResponses(1, tc.code)
			tx, err := c.NewTransaction(ctx, datastore.BeginLater)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Get(k, &rec{}); !errors.Is(err, datastore.ErrNoSuchEntity) {
				t.Fatal(err)
			}
			if _, err := tx.Put(k, &rec{N: 5}); err != nil {
				t.Fatal(err)
			}
			_, err = tx.Commit()
			if status.Code(err) != tc.wantCode {
				t.Fatalf("Commit err = %v, want code %v", err, tc.wantCode)
			}
			if got := srv.Count(dsfake.MethodCommit); got != tc.commits {
				t.Errorf("%d commit RPCs, want %d", got, tc.commits)
			}
			var got rec
			if err := c.Get(ctx, k, &got); err != nil || got.N != 5 {
				t.Errorf("after a dropped response: %+v, %v; want the write applied", got, err)
			}
		})
	}
}

func TestFailNext(t *testing.T) {
	cases := []struct {
		name    string
		n       int
		code    codes.Code
		wantErr codes.Code
		lookups int
	}{
		{"permanent", 1, codes.PermissionDenied, codes.PermissionDenied, 1},
		{"retried by the client", 2, codes.Unavailable, codes.OK, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := dsfake.Start(t)
			c := srv.Client(t, "")
			srv.FailNext(dsfake.MethodLookup, tc.n, tc.code)
			err := c.Get(context.Background(), datastore.NameKey("K", "a", nil), &rec{})
			if errors.Is(err, datastore.ErrNoSuchEntity) {
				err = nil
			}
			if status.Code(err) != tc.wantErr {
				t.Fatalf("err = %v, want code %v", err, tc.wantErr)
			}
			if got := srv.Count(dsfake.MethodLookup); got != tc.lookups {
				t.Errorf("%d lookups, want %d", got, tc.lookups)
			}
		})
	}
}

func TestLatencyAndDeadline(t *testing.T) {
	srv := dsfake.Start(t)
	c := srv.Client(t, "")
	srv.SetLatency(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	k := datastore.NameKey("K", "a", nil)
	if _, err := c.Put(ctx, k, &rec{N: 1}); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("Put under a short deadline: err = %v, want DeadlineExceeded", err)
	}
	srv.SetLatency(0)
	if err := c.Get(context.Background(), k, &rec{}); !errors.Is(err, datastore.ErrNoSuchEntity) {
		t.Errorf("a timed-out put applied: Get err = %v", err)
	}
}

func TestCountersAndReset(t *testing.T) {
	srv := dsfake.Start(t)
	c := srv.Client(t, "")
	ctx := context.Background()
	k := datastore.NameKey("K", "a", nil)
	if _, err := c.Put(ctx, k, &rec{}); err != nil {
		t.Fatal(err)
	}
	_ = c.Get(ctx, k, &rec{})
	if srv.Total() != 2 || srv.Count(dsfake.MethodCommit) != 1 || srv.Count(dsfake.MethodLookup) != 1 {
		t.Errorf("Counts = %v, want one commit and one lookup", srv.Counts())
	}
	srv.ResetCounts()
	if srv.Total() != 0 {
		t.Errorf("after ResetCounts: %v", srv.Counts())
	}
	srv.AbortCommits(5)
	srv.Reset()
	if srv.Len() != 0 {
		t.Errorf("after Reset: Len = %d", srv.Len())
	}
	if _, err := c.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		_, err := tx.Put(k, &rec{})
		return err
	}); err != nil {
		t.Errorf("Reset kept the injected aborts: %v", err)
	}
}

package datastoregate_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
)

// naiveRecord is the record as a plain struct, for the naive pattern.
type naiveRecord struct {
	State       string    `datastore:"state"`
	Fence       int64     `datastore:"fence,noindex"`
	LeaseExpiry time.Time `datastore:"lease_expiry,noindex"`
	ExpiresAt   time.Time `datastore:"expires_at"`
	ClaimToken  string    `datastore:"claim_token,noindex"`
}

// naiveStep is the textbook pattern: begin a transaction, get, put, commit, a
// transaction each for claim and complete.
func naiveStep(ctx context.Context, c *datastore.Client, k *datastore.Key, update func(r *naiveRecord, found bool) bool) error {
	tx, err := c.NewTransaction(ctx)
	if err != nil {
		return err
	}
	var r naiveRecord
	err = tx.Get(k, &r)
	found := err == nil
	if err != nil && !errors.Is(err, datastore.ErrNoSuchEntity) {
		_ = tx.Rollback()
		return err
	}
	if !update(&r, found) {
		return tx.Rollback()
	}
	if _, err := tx.Put(k, &r); err != nil {
		_ = tx.Rollback()
		return err
	}
	_, err = tx.Commit()
	return err
}

func naiveClaimComplete(ctx context.Context, c *datastore.Client, key string) error {
	k := datastore.NameKey("Naive", key, nil)
	now := time.Now()
	won := false
	err := naiveStep(ctx, c, k, func(r *naiveRecord, found bool) bool {
		if found && (r.State != "claimed" || now.Before(r.LeaseExpiry)) {
			return false
		}
		won = true
		*r = naiveRecord{State: "claimed", Fence: r.Fence + 1, LeaseExpiry: now.Add(time.Minute),
			ExpiresAt: now.Add(time.Hour), ClaimToken: "t"}
		return true
	})
	if err != nil || !won {
		return fmt.Errorf("naive claim: won %v, %v", won, err)
	}
	return naiveStep(ctx, c, k, func(r *naiveRecord, found bool) bool {
		if !found || r.State != "claimed" {
			return false
		}
		r.State, r.ExpiresAt = "done", now.Add(time.Hour)
		return true
	})
}

// BenchmarkClaimComplete measures one message's store work (claim, then
// complete, on a fresh key) on the fake, against the naive pattern, with no
// added latency and with 1 ms added to every RPC (a same-region round trip).
func BenchmarkClaimComplete(b *testing.B) {
	run := 0 // keys are fresh in every run, -count included
	for _, lat := range []time.Duration{0, time.Millisecond} {
		srv, err := dsfake.New()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(srv.Close)
		ctx := context.Background()
		c, err := srv.NewClient(ctx, dsfake.Project, "")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		s, err := datastoregate.New(c, nil)
		if err != nil {
			b.Fatal(err)
		}
		srv.SetLatency(lat)
		impls := []struct {
			name string
			run  func(key string) error
		}{
			{"datastoregate", func(key string) error {
				res, err := s.Claim(ctx, gate.ClaimRequest{Key: key, Token: "t", Lease: time.Minute, TTL: time.Hour})
				if err != nil || res.Status != gate.Won {
					return fmt.Errorf("claim: %v %v", res.Status, err)
				}
				ok, err := s.Complete(ctx, gate.Completion{Key: key, Fence: res.Record.Fence, TTL: time.Hour})
				if err != nil || !ok {
					return fmt.Errorf("complete: %v %v", ok, err)
				}
				return nil
			}},
			{"naive", func(key string) error { return naiveClaimComplete(ctx, c, key) }},
		}
		for _, impl := range impls {
			b.Run(fmt.Sprintf("%s/latency=%v", impl.name, lat), func(b *testing.B) {
				srv.ResetCounts()
				run++
				i := 0
				for b.Loop() {
					i++
					if err := impl.run(fmt.Sprint(run, "-", i)); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(srv.Total())/float64(i), "rpcs/op")
			})
		}
	}
}

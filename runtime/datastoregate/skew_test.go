package datastoregate_test

import (
	"context"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/dsfake"
	"github.com/oncegate/oncegate/runtime/datastoregate"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/gatetest"
)

// TestClockSkewMargin: instance B's clock runs 2 s ahead of holder A's. With
// no margin B takes A's claim over 2 s before A's lease ends (the defect: both
// run); with MaxClockSkew 2 s it finds the claim held until A's lease has run
// out on A's clock, then takes it over with fence 2.
func TestClockSkewMargin(t *testing.T) {
	const (
		ahead = 2 * time.Second
		lease = 10 * time.Second
	)
	for _, tt := range []struct {
		name     string
		skew     time.Duration
		takeover bool // whether B takes the key 1.5 s before A's lease ends
	}{
		{"no margin", 0, true},
		{"margin covers the skew", ahead, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			srv := dsfake.Start(t)
			c := srv.Client(t, "")
			clock := gatetest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
			open := func(now func() time.Time) *datastoregate.Store {
				s, err := datastoregate.New(c, &datastoregate.Options{Now: now, MaxClockSkew: tt.skew, RetryBackoff: time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			a := open(clock.Now)
			b := open(func() time.Time { return clock.Now().Add(ahead) })
			req := func(token string) gate.ClaimRequest {
				return gate.ClaimRequest{Key: "k", Token: token, Owner: token, Lease: lease, TTL: time.Hour}
			}
			if res, err := a.Claim(ctx, req("a")); err != nil || res.Status != gate.Won {
				t.Fatalf("A's claim = %v, %v", res.Status, err)
			}
			clock.Advance(lease - 1500*time.Millisecond) // A's lease has 1.5 s to run, on A's clock
			res, err := b.Claim(ctx, req("b"))
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Status == gate.Won; got != tt.takeover {
				t.Fatalf("B's claim 1.5 s before A's lease ends = %v (fence %d); want takeover %v", res.Status, res.Record.Fence, tt.takeover)
			}
			if tt.takeover {
				return
			}
			clock.Advance(1500 * time.Millisecond) // A's lease has ended on A's clock; B is 2 s ahead
			res, err = b.Claim(ctx, req("b"))
			if err != nil || res.Status != gate.Won || res.Record.Fence != 2 {
				t.Fatalf("B's claim after A's lease = %v (fence %d), %v; want won at fence 2", res.Status, res.Record.Fence, err)
			}
		})
	}
}

// TestMaxClockSkewRefusesNegative: a negative margin is refused naming the field.
func TestMaxClockSkewRefusesNegative(t *testing.T) {
	c := dsfake.Start(t).Client(t, "")
	if _, err := datastoregate.New(c, &datastoregate.Options{MaxClockSkew: -time.Second}); err == nil {
		t.Fatal("New accepted a negative MaxClockSkew")
	}
}

package demo

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/oncegate/oncegate/internal/supplier"
)

// order is one order of the demo and the trouble it gets.
type order struct {
	body       supplier.Order
	republish  bool // published again under a new message id
	concurrent bool // pushed to two workers at once, besides Pub/Sub's delivery
	redeliver  bool // pushed again after it was acked (transport redelivery)
}

func (o order) data() []byte {
	b, _ := json.Marshal(o.body)
	return b
}

// makeOrders returns n orders with trouble mixed in, deterministic for a seed:
// one poison order (the eighth, or the last of fewer than eight, so n−1
// orders are distinct for every n ≥ MinOrders), two slow ones (slower than the ack deadline), a few that
// fail twice, and republished, concurrent and redelivered ones.
func makeOrders(n int, seed uint64, slow int) []order {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]order, n)
	for i := range out {
		o := order{body: supplier.Order{Order: fmt.Sprintf("PO-%05d", i+1)}}
		switch r := rng.IntN(100); {
		case r < 10:
			o.republish = true
		case r < 15:
			o.concurrent = true
		case r < 20:
			o.redeliver = true
		case r < 24:
			o.body.FailTimes = 2
		}
		out[i] = o
	}
	if n > 0 {
		p := min(7, n-1)
		out[p] = order{body: supplier.Order{Order: out[p].body.Order, Poison: true}}
	}
	for k := range min(2, n/50) {
		out[n/3+k].body.SlowMS = slow
	}
	return out
}

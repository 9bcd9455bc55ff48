package faults_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// faultProxy is one toxiproxy proxy, run in the test process, between the
// gateway and a store: the gateway dials Addr, the proxy dials the store.
type faultProxy struct {
	t       testing.TB
	p       *toxiproxy.Proxy
	addr    string
	serial  atomic.Int64
	toxics  atomic.Int64 // toxics added so far
	outages atomic.Int64 // times the proxy was taken down
	isDown  atomic.Bool
	pending sync.WaitGroup // pulses still to be removed
}

// newProxy starts a proxy to upstream (host:port) on a free loopback port, and
// stops it when the test ends.
func newProxy(t testing.TB, upstream string) *faultProxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "store", "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatalf("toxiproxy: start proxy to %s: %v", upstream, err)
	}
	fp := &faultProxy{t: t, p: p, addr: p.Listen}
	t.Cleanup(func() {
		fp.pending.Wait()
		p.Stop()
	})
	return fp
}

// Addr is the address the gateway connects to instead of the store's.
func (fp *faultProxy) Addr() string { return fp.addr }

// toxic is one toxic to add: a toxiproxy type ("latency", "timeout",
// "reset_peer", …), the stream it acts on ("upstream" is the gateway's requests,
// "downstream" the store's answers), the share of connections it hits (0 means
// all) and its attributes.
type toxic struct {
	Type     string
	Stream   string
	Toxicity float32
	Attrs    map[string]any
}

// add adds tx to every current and future connection and returns a func
// removing it.
func (fp *faultProxy) add(tx toxic) (remove func()) {
	fp.t.Helper()
	name := fmt.Sprintf("%s_%s_%d", tx.Type, tx.Stream, fp.serial.Add(1))
	if tx.Toxicity == 0 {
		tx.Toxicity = 1
	}
	body, err := json.Marshal(map[string]any{"name": name, "type": tx.Type, "stream": tx.Stream,
		"toxicity": tx.Toxicity, "attributes": tx.Attrs})
	if err != nil {
		fp.t.Fatal(err)
	}
	if _, err := fp.p.Toxics.AddToxicJson(strings.NewReader(string(body))); err != nil {
		fp.t.Fatalf("toxiproxy: add %s: %v", body, err)
	}
	fp.toxics.Add(1)
	var done atomic.Bool
	return func() {
		if done.Swap(true) {
			return
		}
		err := fp.p.Toxics.RemoveToxic(context.Background(), name)
		if err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) { // reset removed it
			fp.t.Errorf("toxiproxy: remove %s: %v", name, err)
		}
	}
}

// pulseAsync applies tx now and removes it after d, without waiting.
func (fp *faultProxy) pulseAsync(tx toxic, d time.Duration) {
	remove := fp.add(tx)
	fp.pending.Add(1)
	time.AfterFunc(d, func() {
		defer fp.pending.Done()
		remove()
	})
}

// latency delays every chunk on stream by d.
func latency(stream string, d time.Duration) toxic {
	return toxic{Type: "latency", Stream: stream, Attrs: map[string]any{"latency": d.Milliseconds()}}
}

// blackHole swallows everything on stream and never closes the connection: a
// hung store or a partition.
func blackHole(stream string) toxic {
	return toxic{Type: "timeout", Stream: stream, Attrs: map[string]any{"timeout": 0}}
}

// resetPeer resets (TCP RST) a share of the connections (1 for all) the moment
// data flows.
func resetPeer(share float32) toxic {
	return toxic{Type: "reset_peer", Stream: "upstream", Toxicity: share, Attrs: map[string]any{"timeout": 0}}
}

// down closes the proxy's listener and every connection through it: the store
// is unreachable (connection refused) until up is called.
func (fp *faultProxy) down() {
	if fp.isDown.Swap(true) {
		return
	}
	fp.p.Stop()
	fp.outages.Add(1)
}

// up opens the proxy again on the same address; it does nothing when the proxy
// is up.
func (fp *faultProxy) up() {
	fp.t.Helper()
	if !fp.isDown.Swap(false) {
		return
	}
	if err := fp.p.Start(); err != nil {
		fp.t.Fatalf("toxiproxy: restart proxy on %s: %v", fp.addr, err)
	}
}

// reset removes every toxic.
func (fp *faultProxy) reset() { fp.p.Toxics.ResetToxics(context.Background()) }

package redisgate_test

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

// splitProxy forwards TCP to a Redis server. Armed with a hook, it holds back the
// next claim's commands from its PEXPIRETIME on, waits until the server has
// answered what it did forward (the SET, or MULTI and the queued SET), runs the
// hook, and then forwards the rest: whatever the hook does on another
// connection lands between the claim's SET and its PEXPIRETIME, the widest
// window a loaded server, a split read or a slow network can open.
type splitProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	hook   func()
	wg     sync.WaitGroup
}

var pexpiretimeCmd = []byte("*2\r\n$11\r\npexpiretime\r\n")

func newSplitProxy(t *testing.T, target string) *splitProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &splitProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { _ = ln.Close(); p.wg.Wait() })
	return p
}

func (p *splitProxy) Addr() string { return p.ln.Addr().String() }

// arm makes hook run inside the next claim that passes through.
func (p *splitProxy) arm(hook func()) {
	p.mu.Lock()
	p.hook = hook
	p.mu.Unlock()
}

func (p *splitProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		replied := make(chan struct{}, 1)
		p.wg.Add(2)
		go func() { // server to client; signals each answer
			defer p.wg.Done()
			defer c.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 {
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
					select {
					case replied <- struct{}{}:
					default:
					}
				}
				if err != nil {
					return
				}
			}
		}()
		go func() { // client to server
			defer p.wg.Done()
			defer s.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					chunk := buf[:n]
					p.mu.Lock()
					hook := p.hook
					i := bytes.Index(chunk, pexpiretimeCmd)
					if hook != nil && i > 0 {
						p.hook = nil
					} else {
						hook = nil
					}
					p.mu.Unlock()
					if hook != nil {
						select { // drop a stale signal
						case <-replied:
						default:
						}
						if _, werr := s.Write(chunk[:i]); werr != nil {
							return
						}
						select {
						case <-replied:
						case <-time.After(5 * time.Second):
						}
						hook()
						chunk = chunk[i:]
					}
					if _, werr := s.Write(chunk); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// TestClaimInterleaved puts another client's write between a claim's SET and
// its PEXPIRETIME. A claim must still answer as if it ran at one instant:
// never held by a lease nobody holds, never claimed when the record is unknown,
// never won with a lease that runs past another holder's takeover, and always
// with times that are the record's.
func TestClaimInterleaved(t *testing.T) {
	addr := testenv.Redis(t)
	direct, c := newStore(t)
	proxy := newSplitProxy(t, addr)
	pc := newClient(t, proxy.Addr())
	viaProxy, err := redisgate.New(pc, &redisgate.Options{Prefix: direct.Prefix()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := func(key, token string, lease time.Duration) gate.ClaimRequest {
		return gate.ClaimRequest{Key: key, Token: token, Owner: "o", Lease: lease, TTL: time.Hour}
	}
	claim := func(t *testing.T, s *redisgate.Store, r gate.ClaimRequest) gate.ClaimResult {
		t.Helper()
		res, err := s.Claim(ctx, r)
		if err != nil {
			t.Fatalf("Claim(%q, %q): %v", r.Key, r.Token, err)
		}
		return res
	}
	lapse := func() { time.Sleep(20 * time.Millisecond) } // 1 ms leases lapse on the server's clock
	sane := func(t *testing.T, name string, res gate.ClaimResult) {
		t.Helper()
		now := time.Now()
		if res.Record.State != gate.StateUnknown && (res.Record.ExpiresAt.Before(now.Add(-time.Minute)) || res.Record.ExpiresAt.After(now.Add(3*time.Hour))) {
			t.Errorf("%s: %v record expires at %v, not the record's expiry", name, res.Status, res.Record.ExpiresAt)
		}
		if !res.Record.LeaseExpiry.IsZero() && res.Record.LeaseExpiry.Before(now.Add(-time.Hour)) {
			t.Errorf("%s: %v record's lease expiry %v is not the record's", name, res.Status, res.Record.LeaseExpiry)
		}
		if !res.Record.DoneAt.IsZero() && res.Record.DoneAt.After(now.Add(time.Second)) {
			t.Errorf("%s: %v record done at %v, in the future", name, res.Status, res.Record.DoneAt)
		}
	}

	t.Run("lapsed claim deleted in between", func(t *testing.T) {
		claim(t, direct, req("gone", "other", time.Millisecond))
		lapse()
		proxy.arm(func() { _ = c.Del(ctx, direct.RedisKey("gone")).Err() }) // as Redis expires it
		res := claim(t, viaProxy, req("gone", "me", time.Minute))
		if res.Status != gate.Won {
			t.Errorf("claim over a lapsed claim that expired meanwhile = %v (lease expiry %v), want won: nobody holds the key",
				res.Status, res.Record.LeaseExpiry)
		}
		sane(t, "deleted", res)
	})
	t.Run("lapsed claim marked unknown in between", func(t *testing.T) {
		r := claim(t, direct, req("unknown", "other", time.Millisecond))
		lapse()
		proxy.arm(func() {
			if ok, err := direct.MarkUnknown(ctx, "unknown", r.Record.Fence); !ok || err != nil {
				t.Errorf("MarkUnknown = %v, %v", ok, err)
			}
		})
		res := claim(t, viaProxy, req("unknown", "me", time.Minute))
		if res.Status != gate.Unknown {
			t.Errorf("claim over a lapsed claim marked unknown meanwhile = %v, want unknown", res.Status)
		}
		sane(t, "marked", res)
	})
	t.Run("own lapsed claim taken over in between", func(t *testing.T) {
		claim(t, direct, req("own", "me", time.Millisecond))
		lapse()
		took := make(chan gate.ClaimResult, 1)
		proxy.arm(func() {
			r, err := direct.Claim(ctx, req("own", "other", time.Minute))
			if err != nil {
				t.Errorf("takeover: %v", err)
			}
			took <- r
		})
		res := claim(t, viaProxy, req("own", "me", time.Minute))
		other := <-took
		if other.Status != gate.Won || other.Record.Fence != 2 {
			t.Fatalf("takeover = %v at fence %d", other.Status, other.Record.Fence)
		}
		if res.Status == gate.Won && res.Record.Fence < other.Record.Fence && res.Record.LeaseExpiry.After(other.Record.LeaseExpiry.Add(-time.Minute).Add(time.Second)) {
			t.Errorf("re-affirmed claim at fence %d reports a lease until %v, past fence %d's takeover at %v",
				res.Record.Fence, res.Record.LeaseExpiry, other.Record.Fence, other.Record.LeaseExpiry.Add(-time.Minute))
		}
		sane(t, "taken over", res)
	})
	t.Run("done record expired and claimed in between", func(t *testing.T) {
		r := claim(t, direct, req("done", "other", time.Minute))
		if ok, err := direct.Complete(ctx, gate.Completion{Key: "done", Fence: r.Record.Fence, TTL: time.Hour}); !ok || err != nil {
			t.Fatalf("Complete = %v, %v", ok, err)
		}
		proxy.arm(func() {
			_ = c.Del(ctx, direct.RedisKey("done")).Err() // as Redis expires it
			if _, err := direct.Claim(ctx, req("done", "next", time.Minute)); err != nil {
				t.Errorf("claim in between: %v", err)
			}
		})
		res := claim(t, viaProxy, req("done", "me", time.Minute))
		sane(t, "done", res)
	})
	t.Run("fresh 1 ms claim expires in between", func(t *testing.T) {
		proxy.arm(func() { time.Sleep(10 * time.Millisecond) })
		res := claim(t, viaProxy, gate.ClaimRequest{Key: "short", Token: "me", Owner: "o", Lease: time.Millisecond})
		if res.Status != gate.Won || res.Record.Fence != 1 {
			t.Fatalf("claim = %v at fence %d, want won at 1", res.Status, res.Record.Fence)
		}
		if now := time.Now(); res.Record.ExpiresAt.Before(now.Add(-time.Minute)) {
			t.Errorf("won record expires at %v, not the key's expiry", res.Record.ExpiresAt)
		}
	})
}

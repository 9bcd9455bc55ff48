package roundtrip

import (
	"context"
	"net"
	"sync"
)

// Names of the counts Dial keeps.
const (
	// NetTrips counts request–response exchanges: a write on a connection that
	// opens it or follows a read from it. Pipelined requests sent before any
	// answer are one exchange, as they cost one network round trip.
	NetTrips = "net_trips"
	// NetDials counts connections opened.
	NetDials = "net_dials"
)

// DialFunc is the dialer shape of go-redis (redis.Options.Dialer), pgx
// (pgconn.Config.DialFunc) and net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dial returns a dialer that opens connections with dial (a net.Dialer when
// nil) and counts, in c, each connection under NetDials and each exchange on it
// under NetTrips. A connection's handshake counts too: take counts after the
// connections a measurement uses are open.
func Dial(dial DialFunc, c *Counter) DialFunc {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c.Add(NetDials, 1)
		return &countConn{Conn: conn, c: c, heard: true}, nil
	}
}

// countConn counts exchanges: heard is true once the peer has spoken since our
// last write (or before our first), so the next write starts an exchange.
type countConn struct {
	net.Conn
	c     *Counter
	mu    sync.Mutex
	heard bool
}

func (cc *countConn) Write(p []byte) (int, error) {
	if len(p) > 0 {
		cc.mu.Lock()
		if cc.heard {
			cc.heard = false
			cc.c.Add(NetTrips, 1)
		}
		cc.mu.Unlock()
	}
	return cc.Conn.Write(p)
}

func (cc *countConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	if n > 0 {
		cc.mu.Lock()
		cc.heard = true
		cc.mu.Unlock()
	}
	return n, err
}

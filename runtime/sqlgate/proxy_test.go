package sqlgate_test

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// delayProxy forwards TCP connections to a server, delivering every chunk of
// bytes rtt/2 after it was read in each direction, so each request–response
// exchange takes rtt longer, as on a network. It counts round trips: a client
// write that follows a server write (or opens the connection) starts one.
type delayProxy struct {
	ln       net.Listener
	upstream string
	rtt      time.Duration
	trips    atomic.Int64
	wg       sync.WaitGroup
}

// newDelayProxy listens on a free loopback port until the test ends.
func newDelayProxy(t testing.TB, upstream string, rtt time.Duration) *delayProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &delayProxy{ln: ln, upstream: upstream, rtt: rtt}
	p.wg.Go(p.serve)
	t.Cleanup(func() { _ = ln.Close(); p.wg.Wait() })
	return p
}

// Addr is the proxy's host:port.
func (p *delayProxy) Addr() string { return p.ln.Addr().String() }

// Trips returns the round trips counted so far.
func (p *delayProxy) Trips() int64 { return p.trips.Load() }

func (p *delayProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.upstream)
		if err != nil {
			_ = c.Close()
			continue
		}
		var serverSpoke atomic.Bool
		serverSpoke.Store(true)
		p.wg.Go(func() {
			p.pipe(s, c, func() {
				if serverSpoke.Swap(false) {
					p.trips.Add(1)
				}
			})
			_ = s.Close()
		})
		p.wg.Go(func() {
			p.pipe(c, s, func() { serverSpoke.Store(true) })
			_ = c.Close()
		})
	}
}

// pipe copies src to dst, each chunk delayed by rtt/2; onRead runs per chunk.
func (p *delayProxy) pipe(dst io.WriteCloser, src io.Reader, onRead func()) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	ch := make(chan chunk, 1024)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 32*1024)
			n, err := src.Read(buf)
			if n > 0 {
				onRead()
				ch <- chunk{buf[:n], time.Now().Add(p.rtt / 2)}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			for range ch { // drain so the reader ends
			}
			return
		}
	}
}

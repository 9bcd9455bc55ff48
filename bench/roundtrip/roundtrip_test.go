package roundtrip_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"net"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/oncegate/oncegate/bench/roundtrip"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
)

// echoServer answers every line with the same line, until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					if _, err := c.Write(line); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestDialCountsExchanges(t *testing.T) {
	addr := echoServer(t)
	var c roundtrip.Counter
	conn, err := roundtrip.Dial(nil, &c)(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	exchange := func(lines ...string) {
		t.Helper()
		for _, l := range lines { // pipelined: all written before any answer is read
			if _, err := conn.Write([]byte(l + "\n")); err != nil {
				t.Fatal(err)
			}
		}
		for range lines {
			if _, err := r.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
	}
	exchange("a")
	exchange("b")
	exchange("c", "d", "e")
	if got := c.Get(roundtrip.NetTrips); got != 3 {
		t.Errorf("NetTrips = %d after two single requests and one pipeline, want 3", got)
	}
	if got := c.Get(roundtrip.NetDials); got != 1 {
		t.Errorf("NetDials = %d, want 1", got)
	}
}

func TestCountBackendCountsPortCalls(t *testing.T) {
	var calls roundtrip.Counter
	b := roundtrip.CountBackend(memgate.New(nil), &calls)
	ctx := context.Background()
	per := new(roundtrip.Counter)
	g, err := gate.New(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := func(context.Context, gate.Claim) error { return nil }
	if err := g.Lock(roundtrip.WithCounter(ctx, per), "k", body); err != nil {
		t.Fatal(err)
	}
	if err := g.Lock(ctx, "k", body); !errors.Is(err, gate.ErrDuplicate) {
		t.Fatalf("second Lock = %v, want a duplicate", err)
	}
	want := map[string]int64{roundtrip.CallClaim: 2, roundtrip.CallComplete: 1, roundtrip.CallClaimRefused: 1}
	for name, n := range want {
		if got := calls.Get(name); got != n {
			t.Errorf("%s = %d, want %d (%s)", name, got, n, &calls)
		}
	}
	if got := per.Sum(roundtrip.PortCalls...); got != 2 {
		t.Errorf("the first Lock's context counted %d port calls (%s), want 2", got, per)
	}
}

func TestConnectorCountsStatements(t *testing.T) {
	name := filepath.Join(t.TempDir(), "t.db")
	probe, err := sql.Open("sqlite", name)
	if err != nil {
		t.Fatal(err)
	}
	drv := probe.Driver()
	_ = probe.Close()
	conn, err := roundtrip.DriverConnector(drv, name)
	if err != nil {
		t.Fatal(err)
	}
	var c roundtrip.Counter
	db := sql.OpenDB(roundtrip.Connector{Inner: conn, C: &c})
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	mustExec("CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB)")
	st, err := db.PrepareContext(ctx, "INSERT INTO t VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c.Reset()
	per := new(roundtrip.Counter)
	pctx := roundtrip.WithCounter(ctx, per)
	if _, err := st.ExecContext(pctx, "a", []byte{0, 1}); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(pctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRowContext(pctx, "SELECT count(*) FROM t WHERE k = ?", "a").Scan(&n); err != nil || n != 1 {
		t.Fatalf("count = %d, %v", n, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{roundtrip.SQLExec: 1, roundtrip.SQLQuery: 1, roundtrip.SQLBegin: 1, roundtrip.SQLCommit: 1}
	for name, n := range want {
		if got := c.Get(name); got != n {
			t.Errorf("%s = %d, want %d (%s)", name, got, n, &c)
		}
		if got := per.Get(name); got != n {
			t.Errorf("context's %s = %d, want %d (%s)", name, got, n, per)
		}
	}
	if got := c.Sum(roundtrip.SQLTrips...); got != 4 {
		t.Errorf("SQLTrips sum = %d, want 4", got)
	}
}

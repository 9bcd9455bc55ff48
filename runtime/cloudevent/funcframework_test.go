package cloudevent_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/GoogleCloudPlatform/functions-framework-go/funcframework"
	"github.com/GoogleCloudPlatform/functions-framework-go/functions"

	"github.com/oncegate/oncegate/runtime/cloudevent"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

// TestUnderFunctionsFramework serves the handler through functions-framework-go,
// registered as an HTTP function, and checks the statuses survive the framework.
func TestUnderFunctionsFramework(t *testing.T) {
	store := memgate.New(nil)
	g, _ := newGate(t, store)
	release := make(chan struct{})
	h, err := cloudevent.NewHandler(g, func(ctx context.Context, e *cloudevent.Event, c gate.Claim) error {
		<-release
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	functions.HTTP("OnOrder", h.ServeHTTP)
	t.Setenv("FUNCTION_TARGET", "OnOrder")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	go func() { _ = funcframework.StartHostPort("127.0.0.1", port) }() // lives until the test binary exits
	url := "http://127.0.0.1:" + port + "/"

	bh, bb := binaryFixture(t)
	do := func() *http.Response {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(bb))
		req.Header = bh.Clone()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("functions framework did not start")
		}
		time.Sleep(20 * time.Millisecond) // waiting for a real listener, not a clock
	}
	first := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(bb))
		req.Header = bh.Clone()
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		first <- res
	}()
	// Wait until the first delivery holds the key, then send a concurrent duplicate.
	for store.Len() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if res := do(); res.StatusCode != http.StatusServiceUnavailable || res.Header.Get(push.HeaderOutcome) != "in-progress" {
		t.Errorf("concurrent duplicate: %d %s", res.StatusCode, res.Header.Get(push.HeaderOutcome))
	}
	close(release)
	if res := <-first; res == nil || res.StatusCode != http.StatusNoContent {
		t.Fatalf("first delivery: %v", res)
	}
	if res := do(); res.StatusCode != http.StatusNoContent || res.Header.Get(push.HeaderOutcome) != "duplicate" {
		t.Errorf("redelivery: %d %s", res.StatusCode, res.Header.Get(push.HeaderOutcome))
	}
}

package push_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/memgate"
	"github.com/oncegate/oncegate/runtime/push"
)

// allocated returns the bytes allocated by f, averaged over runs.
func allocated(runs int, f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

// TestDeclaredLengthSizesNothing sends a 25-byte body declaring the largest
// accepted Content-Length (14.4 MB): the answer is 400 and the request
// allocates far less than the declared size (it allocated 14 MB when the
// buffer was sized from Content-Length). A declared length past the cap is 413
// without reading a byte.
func TestDeclaredLengthSizesNothing(t *testing.T) {
	e := newEnv(t, nil, nil)
	h, err := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { return nil }, &push.Options{AdapterOptions: push.AdapterOptions{Logger: e.log}})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(body io.Reader, length int64) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/", body)
		req.ContentLength = length
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	const tiny = `{"message":{"messageId":`
	var code int
	per := allocated(10, func() { code = serve(strings.NewReader(tiny), push.DefaultMaxBodyBytes).Code })
	if code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", code)
	}
	if per > 256<<10 {
		t.Errorf("a %d-byte body declaring %d bytes allocated %d bytes per request; want under 256 KiB", len(tiny), push.DefaultMaxBodyBytes, per)
	}
	read := false
	rec := serve(readerFunc(func([]byte) (int, error) { read = true; return 0, io.EOF }), push.DefaultMaxBodyBytes+1)
	if rec.Code != http.StatusRequestEntityTooLarge || read {
		t.Errorf("declared over the cap: status %d, body read %v; want 413 without reading", rec.Code, read)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestConcurrentReadsAreBounded holds MaxConcurrentReads bodies mid-read: a
// further request waits for a slot and, when its context ends first, is
// answered 503 "busy" without a byte of its body read. Once a slot frees, the
// next request is served.
func TestConcurrentReadsAreBounded(t *testing.T) {
	e := newEnv(t, nil, nil)
	h, err := push.NewHandler(e.gate, func(context.Context, *push.Message, gate.Claim) error { return nil },
		&push.Options{AdapterOptions: push.AdapterOptions{Logger: e.log, MaxConcurrentReads: 2}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	writers := make([]*io.PipeWriter, 2)
	for i := range writers {
		pr, pw := io.Pipe()
		writers[i] = pw
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", pr))
		}()
		// The write returns once the handler has read it: the slot is held.
		if _, err := pw.Write([]byte(`{"message":`)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	read := false
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", readerFunc(func([]byte) (int, error) { read = true; return 0, io.EOF }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get(push.HeaderOutcome) != gate.OutcomeBusy.String() || read {
		t.Errorf("third read: status %d, outcome %q, body read %v; want 503 busy, unread", rec.Code, rec.Header().Get(push.HeaderOutcome), read)
	}
	_ = writers[0].Close()
	_ = writers[1].Close()
	wg.Wait()
	if res := post(t, h, envelope("m-after", []byte("x"), 0), nil); res.StatusCode != http.StatusNoContent {
		t.Errorf("after the slots freed: status %d", res.StatusCode)
	}
}

// BenchmarkSlowConnectionMemory measures the heap one slow push pins: 32
// requests declare the largest accepted body (DefaultMaxBodyBytes), send 200
// bytes and stall. B/slow-conn is the live heap they hold, per request, while
// they stall (14.4 MB each when the buffer was sized from Content-Length).
func BenchmarkSlowConnectionMemory(b *testing.B) {
	const conns = 32
	quiet := slog.New(slog.DiscardHandler)
	g, err := gate.New(memgate.New(nil), &gate.Options{Namespace: "bench", Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	h, err := push.NewHandler(g, func(context.Context, *push.Message, gate.Claim) error { return nil },
		&push.Options{AdapterOptions: push.AdapterOptions{MaxConcurrentReads: conns, Logger: quiet}})
	if err != nil {
		b.Fatal(err)
	}
	chunk := []byte(`{"message":{"messageId":"` + strings.Repeat("9", 200-26))
	var perConn float64
	for b.Loop() {
		var before, during runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var wg sync.WaitGroup
		writers := make([]*io.PipeWriter, conns)
		for i := range writers {
			pr, pw := io.Pipe()
			writers[i] = pw
			req := httptest.NewRequest(http.MethodPost, "/", pr)
			req.ContentLength = push.DefaultMaxBodyBytes
			wg.Add(1)
			go func() {
				defer wg.Done()
				h.ServeHTTP(httptest.NewRecorder(), req)
			}()
			if _, err := pw.Write(chunk); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&during)
		perConn = float64(int64(during.HeapAlloc)-int64(before.HeapAlloc)) / conns
		for _, pw := range writers {
			_ = pw.Close()
		}
		wg.Wait()
	}
	b.ReportMetric(perConn, "B/slow-conn")
}

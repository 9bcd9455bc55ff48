package idemhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/oncegate/oncegate/runtime/gate"
)

// ReplayHeader marks a replayed response.
const ReplayHeader = "Idempotent-Replayed"

// Options configure the middleware. The zero value (or nil) means defaults.
type Options struct {
	// Header is the request header carrying the key. Default "Idempotency-Key".
	Header string
	// Required makes a request without the header fail with 400; otherwise it
	// passes through unguarded.
	Required bool
	// MaxKeyBytes bounds the key's length. Default 255.
	MaxKeyBytes int
	// MaxBodyBytes bounds the request body read for the fingerprint; a larger
	// body is 413. Default 1 MiB.
	MaxBodyBytes int64
	// ReplayHeaders are the response headers stored and replayed. Default
	// Content-Type, Content-Language and Location.
	ReplayHeaders []string
	// Principal, when set, scopes keys by the authenticated caller or tenant it
	// returns for the request, so one principal's key never replays another's
	// result. An error answers 401 without running the handler.
	Principal func(r *http.Request) (string, error)
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// stored is a response as the ledger keeps it.
type stored struct {
	Status int                 `json:"status"`
	Header map[string][]string `json:"header,omitempty"`
	Body   []byte              `json:"body,omitempty"`
}

var errNotFinal = errors.New("idemhttp: handler answered a transient status; not stored")

// final reports whether a handler's status is its final answer for the key,
// stored and replayed for the ttl. 5xx is not, nor are the 4xx that say "try
// again": 408 Request Timeout, 425 Too Early and 429 Too Many Requests (RFC
// 9110 §15.5.9, RFC 8470 §5.2, RFC 6585 §4); replaying one would refuse every
// retry until the key expires, which the draft's retry model rules out.
func final(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return status < 500
}

// Middleware returns next guarded by g (use gate.Options.Namespace to separate
// APIs, and gate.Options.AEAD to seal stored responses). It returns an error
// for a nil gate or handler.
func Middleware(g *gate.Gate, next http.Handler, opts *Options) (http.Handler, error) {
	if g == nil || next == nil {
		return nil, errors.New("idemhttp.Middleware: gate and next handler are required")
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Header == "" {
		o.Header = "Idempotency-Key"
	}
	if o.MaxKeyBytes <= 0 {
		o.MaxKeyBytes = 255
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.ReplayHeaders == nil {
		o.ReplayHeaders = []string{"Content-Type", "Content-Language", "Location"}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &handler{g: g, next: next, o: o}, nil
}

type handler struct {
	g    *gate.Gate
	next http.Handler
	o    Options
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get(h.o.Header)
	switch {
	case key == "" && h.o.Required:
		problem(w, http.StatusBadRequest, "Idempotency-Key is missing", fmt.Sprintf("this endpoint requires the %s header", h.o.Header))
		return
	case key == "":
		h.next.ServeHTTP(w, r)
		return
	case len(key) > h.o.MaxKeyBytes:
		problem(w, http.StatusBadRequest, "Idempotency-Key is too long", fmt.Sprintf("%s must be at most %d bytes", h.o.Header, h.o.MaxKeyBytes))
		return
	}
	parts := []string{key}
	if h.o.Principal != nil {
		p, err := h.o.Principal(r)
		if err != nil || p == "" {
			problem(w, http.StatusUnauthorized, "no principal", "the request's caller could not be determined")
			return
		}
		parts = []string{p, key}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.o.MaxBodyBytes))
	if err != nil {
		problem(w, http.StatusRequestEntityTooLarge, "request body too large", fmt.Sprintf("at most %d bytes", h.o.MaxBodyBytes))
		return
	}
	fingerprint := bytes.Join([][]byte{[]byte(r.Method), []byte(r.URL.RequestURI()), body}, []byte{0})

	var rec *recorder
	resp, executed, err := gate.Do(r.Context(), h.g, gate.Call{Key: gate.OperationKey(parts...), Payload: fingerprint},
		func(ctx context.Context, _ gate.Claim) (stored, error) {
			r2 := r.Clone(ctx)
			r2.Body = io.NopCloser(bytes.NewReader(body))
			rec = newRecorder()
			h.next.ServeHTTP(rec, r2)
			if !final(rec.statusOrOK()) {
				return stored{}, errNotFinal
			}
			return rec.stored(h.o.ReplayHeaders), nil
		})
	switch o := gate.OutcomeOf(err); {
	case err == nil && !executed:
		w.Header().Set(ReplayHeader, "true")
		write(w, resp)
	case rec != nil && (err == nil || o == gate.OutcomeBodyFailed || o == gate.OutcomeNotRecorded || o == gate.OutcomeFencedOut):
		// The handler ran: its own answer goes out, stored or not.
		rec.flush(w)
	case errors.Is(err, gate.ErrKeyReuse):
		problem(w, http.StatusUnprocessableEntity, "Idempotency-Key reused", "this key was already used with a different request")
	case errors.Is(err, gate.ErrInProgress):
		problem(w, http.StatusConflict, "request in progress", "a request with this key is being processed; retry later")
	case errors.Is(err, gate.ErrUnknownOutcome), errors.Is(err, gate.ErrSealedResult):
		h.o.Logger.Error("idemhttp: stored outcome unusable", "err", err)
		problem(w, http.StatusInternalServerError, "outcome unknown", "the outcome of the first request with this key is unknown")
	default:
		h.o.Logger.Warn("idemhttp: gateway unavailable", "err", err)
		problem(w, http.StatusServiceUnavailable, "idempotency store unavailable", "retry later")
	}
}

func write(w http.ResponseWriter, s stored) {
	for k, vs := range s.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(s.Status)
	_, _ = w.Write(s.Body)
}

func problem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"title":%q,"status":%d,"detail":%q}`+"\n", title, status, detail)
}

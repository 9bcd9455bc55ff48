package push

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/telemetry"
)

// Mode picks the verb a Guard runs each delivery under.
type Mode int

const (
	// ModeLock de-duplicates (gate.Lock): a redelivery of a done key is skipped and
	// acked. The default.
	ModeLock Mode = iota
	// ModeMutex serializes (gate.Mutex): every delivery runs, one at a time per key.
	ModeMutex
)

func (m Mode) String() string {
	switch m {
	case ModeLock:
		return "lock"
	case ModeMutex:
		return "mutex"
	}
	return "invalid"
}

// Delivery is one parsed request: what a Guard keys, logs and runs.
type Delivery struct {
	// Key is the idempotency key before the gate's namespace is applied. An empty
	// Key, or a non-nil KeyErr, means no key is resolvable: the Guard answers 500
	// without claiming unless unguarded runs are allowed.
	Key    string
	KeyErr error
	// MessageID and DeliveryAttempt (0 when absent) are logged and traced.
	MessageID       string
	DeliveryAttempt int
	// Run is the guarded work, bound to the parsed message.
	Run gate.Body
}

// Parser turns a request whose body was already read (at most the Guard's
// MaxBodyBytes) into a Delivery. It must not keep r. An error matching ErrTooLarge
// answers 413; any other error answers 400 (malformed).
type Parser func(r *http.Request, body []byte) (Delivery, error)

// GuardOptions configure a Guard: the shared AdapterOptions plus what only a
// Guard's builder knows. The zero value (or nil) means defaults.
type GuardOptions struct {
	AdapterOptions
	// Adapter names the adapter in logs, metrics and spans. Default "http".
	Adapter string
	// MaxBodyBytes caps the request body read, in bytes; past it the Guard answers
	// 413 without parsing, and a declared Content-Length past it answers 413
	// without reading. Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// Guard is an http.Handler that verifies, reads and parses a request, claims its
// key through a gate, runs the work and answers HTTP by the ack table
// (gate.Outcome's HTTPStatus). NewHandler builds one for Pub/Sub push;
// runtime/cloudevent builds one for Eventarc. A Guard is safe for concurrent
// use.
type Guard struct {
	g        *gate.Gate
	parse    Parser
	o        GuardOptions
	verb     gate.Verb
	log      *slog.Logger
	tel      *telemetry.Instruments
	spanName string
	reads    chan struct{} // one token per body being read
	// reuseBody says the parser keeps no reference to the body it was
	// given, so a small read buffer goes back to bodyPool once parsed.
	reuseBody bool
	measures  map[string][]telemetry.Prepared // by mode, then outcome
}

// DefaultMaxConcurrentReads is AdapterOptions.MaxConcurrentReads' default: 16
// bodies at once, at most 16 × DefaultMaxBodyBytes (about 230 MB) in flight,
// and only as much as senders actually sent.
const DefaultMaxConcurrentReads = 16

var _ http.Handler = (*Guard)(nil)

// NewGuard returns a Guard running parse's deliveries through g. It returns an
// error naming the field when o is invalid, or when g is nil and o.Disabled is
// false.
func NewGuard(g *gate.Gate, parse Parser, o *GuardOptions) (*Guard, error) {
	var v GuardOptions
	if o != nil {
		v = *o
	}
	switch {
	case parse == nil:
		return nil, errors.New("push.NewGuard: parser is nil")
	case g == nil && !v.Disabled:
		return nil, errors.New("push.NewGuard: gate is nil; pass a *gate.Gate (only a Disabled guard may have none)")
	case v.MaxBodyBytes < 0:
		return nil, fmt.Errorf("push.GuardOptions.MaxBodyBytes: must be zero (default) or positive, got %d", v.MaxBodyBytes)
	}
	var err error
	if v.AdapterOptions, err = v.AdapterOptions.withDefaults(); err != nil {
		return nil, err
	}
	if v.Adapter == "" {
		v.Adapter = "http"
	}
	if v.MaxBodyBytes == 0 {
		v.MaxBodyBytes = DefaultMaxBodyBytes
	}
	log := v.Logger
	if log == nil && g != nil {
		log = g.Options().Logger
	}
	if log == nil {
		log = slog.Default()
	}
	gd, err := newGuard(v, log)
	if err != nil {
		return nil, err
	}
	gd.g, gd.parse = g, parse
	gd.reads = make(chan struct{}, v.MaxConcurrentReads)
	if v.Mode == ModeMutex {
		gd.verb = gate.VerbMutex
	}
	if v.Disabled {
		gd.log.Warn("oncegate: ONCEGATE_DISABLED: the handler is a pass-through; every delivery runs unguarded (for handler unit tests only)")
	}
	return gd, nil
}

// newGuard returns the Guard's telemetry and logging half, its metric label
// sets prepared for every mode and outcome it can answer.
func newGuard(v GuardOptions, log *slog.Logger) (*Guard, error) {
	tel, err := telemetry.New(&telemetry.Options{MeterProvider: v.MeterProvider, TracerProvider: v.TracerProvider})
	if err != nil {
		return nil, err
	}
	gd := &Guard{o: v, log: log.With("adapter", v.Adapter), tel: tel,
		spanName: "oncegate." + v.Adapter + " process", measures: map[string][]telemetry.Prepared{}}
	for _, mode := range []string{v.Mode.String(), modeUnguarded, modeDisabled} {
		for _, o := range gate.Outcomes() {
			gd.measures[mode] = append(gd.measures[mode],
				telemetry.Labels{Adapter: v.Adapter, Mode: mode, Outcome: o.String(), Ack: o.Ack()}.Prepare())
		}
	}
	return gd, nil
}

// measure returns the prepared label set of mode and o.
func (gd *Guard) measure(mode string, o gate.Outcome) telemetry.Prepared {
	if ms, ok := gd.measures[mode]; ok && o >= 0 && int(o) < len(ms) {
		return ms[o]
	}
	return telemetry.Labels{Adapter: gd.o.Adapter, Mode: mode, Outcome: o.String(), Ack: o.Ack()}.Prepare()
}

// ServeHTTP implements http.Handler.
func (gd *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		gd.refuse(w, r, gate.OutcomeBadMethod, fmt.Errorf("method %s", r.Method))
		return
	}
	if !gd.verify(w, r) {
		return
	}
	body, pooled, err := gd.readBody(w, r)
	if err != nil {
		// A read deadline, a dropped connection or a truncated body says
		// nothing about the envelope: a nack the retry policy redelivers, not a
		// 400 that would walk the message to the dead-letter topic.
		gd.refuse(w, r, refusal(err, gate.OutcomeReadFailed), err)
		return
	}
	d, err := gd.parse(r, body)
	if pooled != nil {
		*pooled = body[:0]
		bodyPool.Put(pooled)
	}
	if err != nil {
		gd.refuse(w, r, refusal(err, gate.OutcomeMalformed), err)
		return
	}
	gd.serve(w, r, d)
}

// refusal classifies an error of the body read or the parser: busy, too
// large, else otherwise.
func refusal(err error, otherwise gate.Outcome) gate.Outcome {
	switch {
	case errors.Is(err, errBusy):
		return gate.OutcomeBusy
	case errors.Is(err, ErrTooLarge):
		return gate.OutcomeTooLarge
	}
	return otherwise
}

// verify checks the request's OIDC token when the Guard has an OIDCConfig and
// answers 401 or 403 when it fails; it reports whether the request may go on.
func (gd *Guard) verify(w http.ResponseWriter, r *http.Request) bool {
	if gd.o.OIDC == nil {
		return true
	}
	err := gd.o.OIDC.Verify(r.Context(), r.Header.Get("Authorization"))
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrForbidden):
		gd.refuse(w, r, gate.OutcomeForbidden, err)
	default:
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		gd.refuse(w, r, gate.OutcomeUnauthenticated, err)
	}
	return false
}

// RequireOIDC returns h behind c's token check, for a server that must verify
// every push whatever options the handlers it routes to were built with
// (gateenv's Config.Serve wraps what it serves with it). A request whose method
// is not GET, HEAD or OPTIONS must carry a valid token, checked as a Guard
// checks it (OIDCConfig.Verify): otherwise it is answered 401 (outcome
// "unauthenticated", with a WWW-Authenticate header) or 403 ("forbidden"), both
// nacks, and never reaches h. GET, HEAD and OPTIONS pass unchecked: no push
// uses them (Pub/Sub pushes are POSTs, and a Guard answers them 405), and
// health probes (Cloud Run's HTTP probes are GETs) carry no token.
//
// A Guard behind it that has the same OIDCConfig verifies the token again:
// verification is local (a signature check against Google's certificates,
// cached by the validator), so it is not skipped, and a handler with a
// different OIDCConfig still gets its own check. logger receives one warning per
// refusal (nil: slog.Default()). It returns an error naming the field when c is
// nil or incomplete.
func RequireOIDC(c *OIDCConfig, h http.Handler, logger *slog.Logger) (http.Handler, error) {
	if c == nil {
		return nil, errors.New("push.RequireOIDC: OIDCConfig is nil")
	}
	if h == nil {
		return nil, errors.New("push.RequireOIDC: handler is nil")
	}
	v, err := c.validate()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	gd, err := newGuard(GuardOptions{Adapter: "http", AdapterOptions: AdapterOptions{OIDC: v}}, logger)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if !gd.verify(w, r) {
				return
			}
		}
		h.ServeHTTP(w, r)
	}), nil
}

var errBusy = errors.New("too many request bodies being read")

// readBody reads at most MaxBodyBytes; a longer body, declared or sent, is
// ErrTooLarge, and any other failure to read it (a read deadline, a broken
// connection) is returned wrapped, for a 503 "read-failed". It holds one of
// MaxConcurrentReads slots while it reads (errBusy when the request ends
// first). Its buffer grows with the bytes received: the declared
// Content-Length is a claim of the sender, so it sizes the first buffer only
// up to readHint bytes, which a lying sender can waste and no more. When the
// Guard reuses bodies and the declared length is under readHint, the buffer
// comes from bodyPool and pooled is its holder, to put back once parsed.
func (gd *Guard) readBody(w http.ResponseWriter, r *http.Request) (body []byte, pooled *[]byte, err error) {
	if r.ContentLength > gd.o.MaxBodyBytes {
		return nil, nil, fmt.Errorf("%w: declared Content-Length %d is over %d bytes", ErrTooLarge, r.ContentLength, gd.o.MaxBodyBytes)
	}
	select {
	case gd.reads <- struct{}{}:
	default:
		select {
		case gd.reads <- struct{}{}:
		case <-r.Context().Done():
			return nil, nil, fmt.Errorf("%w (%d): %w", errBusy, cap(gd.reads), context.Cause(r.Context()))
		}
	}
	defer func() { <-gd.reads }()
	var buf []byte
	switch cl := r.ContentLength; {
	case cl >= 0 && cl < readHint && gd.reuseBody:
		pooled, _ = bodyPool.Get().(*[]byte)
		if pooled == nil {
			b := make([]byte, 0, readHint)
			pooled = &b
		}
		buf = *pooled
	case cl >= 0 && cl < readHint:
		buf = make([]byte, 0, cl+1) // room to see EOF without growing
	default:
		buf = make([]byte, 0, minRead)
	}
	rd := http.MaxBytesReader(w, r.Body, gd.o.MaxBodyBytes)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		var mbe *http.MaxBytesError
		switch {
		case err == io.EOF:
			if pooled != nil && cap(buf) > readHint {
				pooled = nil // the body outgrew its declared length; let it go
			}
			return buf, pooled, nil
		case errors.As(err, &mbe):
			return nil, nil, fmt.Errorf("%w: request body over %d bytes", ErrTooLarge, mbe.Limit)
		case err != nil:
			return nil, nil, fmt.Errorf("read body: %w", err)
		}
	}
}

// minRead is the first read buffer when Content-Length is absent or large
// (bytes.MinRead's size); readHint is the largest Content-Length that sizes
// the first buffer, and the size of bodyPool's buffers.
const (
	minRead  = 512
	readHint = 4 << 10
)

// bodyPool holds readHint-byte read buffers for Guards whose parser copies
// what it keeps (NewHandler's): most pushes are small, and their body buffer
// is then reused instead of allocated per request.
var bodyPool sync.Pool

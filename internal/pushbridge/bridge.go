// Package pushbridge turns a pull subscription into Pub/Sub push deliveries, for
// local development and tests: the Pub/Sub emulator and pstest do not push. It
// pulls, POSTs each message to an endpoint as a real push request (the wrapped
// JSON envelope), acknowledges on the push-ack codes (102, 200, 201, 202, 204 —
// Pub/Sub push docs, "Receive messages" / push subscriptions), and otherwise
// nacks the way a subscription's retry policy does: it sets the message's ack
// deadline to the exponential backoff delay (minimum × 2^(attempt−1), capped at
// the maximum), so the redelivery waits. Push has no such thing as a nack with
// no delay when a retry policy is set; pstest and the emulator honour the
// modified deadline.
package pushbridge

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	vkit "cloud.google.com/go/pubsub/v2/apiv1"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
)

// Options configure a Bridge. Subscription and Endpoint are required.
type Options struct {
	// Subscription is the full name: projects/P/subscriptions/S.
	Subscription string
	// Endpoint is the push endpoint URL.
	Endpoint string
	// Concurrency is how many deliveries may be in flight. Default 8.
	Concurrency int
	// AckDeadline, MinBackoff and MaxBackoff default to the subscription's ack
	// deadline and retry policy, read at start. Pub/Sub's defaults without a
	// retry policy are immediate redelivery; the bridge then uses 0.
	AckDeadline, MinBackoff, MaxBackoff time.Duration
	// HTTPClient posts the requests; its timeout defaults to the ack deadline (a
	// push not answered within the ack deadline is a nack).
	HTTPClient *http.Client
	// Authorization, when set, returns the Authorization header value (for
	// example "Bearer <OIDC token>") for each push.
	Authorization func(ctx context.Context) (string, error)
	// OnDelivery observes every delivery. It must not block.
	OnDelivery func(Delivery)
	// Logger; default slog.Default().
	Logger *slog.Logger
}

// Delivery is one push attempt.
type Delivery struct {
	MessageID string
	// Attempt is the delivery attempt: Pub/Sub's count when the subscription has
	// a dead-letter policy, else the bridge's own count.
	Attempt int
	// Status is the HTTP status, 0 when the request failed.
	Status int
	Acked  bool
	Err    error
}

// Stats are a bridge's running totals.
type Stats struct {
	Deliveries, Acks, Nacks int64
}

// Bridge pulls from one subscription and pushes to one endpoint.
type Bridge struct {
	sub      *vkit.SubscriptionAdminClient
	o        Options
	dlq      bool
	attempts sync.Map // message id → *atomic.Int32, when there is no DLQ count
	stats    struct{ deliveries, acks, nacks atomic.Int64 }
}

// New reads the subscription's settings and returns a Bridge. It returns an
// error naming the missing option, or the subscription lookup's error.
func New(ctx context.Context, sub *vkit.SubscriptionAdminClient, o Options) (*Bridge, error) {
	if o.Subscription == "" || o.Endpoint == "" {
		return nil, errors.New("pushbridge: Options.Subscription (projects/P/subscriptions/S) and Options.Endpoint (a URL) are required")
	}
	s, err := sub.GetSubscription(ctx, &pubsubpb.GetSubscriptionRequest{Subscription: o.Subscription})
	if err != nil {
		return nil, fmt.Errorf("pushbridge: get subscription %s: %w", o.Subscription, err)
	}
	if o.AckDeadline == 0 {
		o.AckDeadline = time.Duration(max(s.AckDeadlineSeconds, 10)) * time.Second
	}
	if rp := s.RetryPolicy; rp != nil {
		if o.MinBackoff == 0 {
			o.MinBackoff = rp.GetMinimumBackoff().AsDuration()
		}
		if o.MaxBackoff == 0 {
			o.MaxBackoff = rp.GetMaximumBackoff().AsDuration()
		}
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: o.AckDeadline}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Bridge{sub: sub, o: o, dlq: s.DeadLetterPolicy != nil}, nil
}

// Stats returns the running totals.
func (b *Bridge) Stats() Stats {
	return Stats{b.stats.deliveries.Load(), b.stats.acks.Load(), b.stats.nacks.Load()}
}

// Run pulls and pushes until ctx is cancelled, then waits for the deliveries in
// flight to finish (drain) and returns nil. Pull errors other than the
// context's are logged and retried after a second.
func (b *Bridge) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for range b.o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.loop(ctx)
		}()
	}
	wg.Wait()
	return nil
}

func (b *Bridge) loop(ctx context.Context) {
	for ctx.Err() == nil {
		resp, err := b.sub.Pull(ctx, &pubsubpb.PullRequest{Subscription: b.o.Subscription, MaxMessages: 1})
		if err != nil {
			if ctx.Err() == nil {
				b.o.Logger.Warn("pushbridge: pull", "err", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		for _, rm := range resp.ReceivedMessages {
			// Deliveries already pulled finish even while draining.
			b.deliver(context.WithoutCancel(ctx), rm)
		}
	}
}

func (b *Bridge) deliver(ctx context.Context, rm *pubsubpb.ReceivedMessage) {
	m := rm.GetMessage()
	attempt := int(rm.GetDeliveryAttempt())
	if !b.dlq || attempt == 0 {
		c, _ := b.attempts.LoadOrStore(m.GetMessageId(), new(atomic.Int32))
		attempt = int(c.(*atomic.Int32).Add(1))
	}
	status, err := b.post(ctx, m, attempt)
	acked := err == nil && Acks(status)
	b.stats.deliveries.Add(1)
	var rpcErr error
	if acked {
		b.stats.acks.Add(1)
		b.attempts.Delete(m.GetMessageId())
		rpcErr = b.sub.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: b.o.Subscription, AckIds: []string{rm.AckId}})
	} else {
		b.stats.nacks.Add(1)
		delay := Backoff(b.o.MinBackoff, b.o.MaxBackoff, attempt)
		rpcErr = b.sub.ModifyAckDeadline(ctx, &pubsubpb.ModifyAckDeadlineRequest{
			Subscription: b.o.Subscription, AckIds: []string{rm.AckId}, AckDeadlineSeconds: int32((delay + time.Second - 1) / time.Second),
		})
	}
	if rpcErr != nil {
		b.o.Logger.Warn("pushbridge: ack/modack", "message_id", m.GetMessageId(), "err", rpcErr)
	}
	if b.o.OnDelivery != nil {
		b.o.OnDelivery(Delivery{MessageID: m.GetMessageId(), Attempt: attempt, Status: status, Acked: acked, Err: err})
	}
}

// envelope is the wrapped push request body.
type envelope struct {
	Message struct {
		Data         string            `json:"data,omitempty"`
		Attributes   map[string]string `json:"attributes,omitempty"`
		MessageID    string            `json:"messageId"`
		MessageID2   string            `json:"message_id"`
		PublishTime  string            `json:"publishTime"`
		PublishTime2 string            `json:"publish_time"`
		OrderingKey  string            `json:"orderingKey,omitempty"`
	} `json:"message"`
	Subscription    string `json:"subscription"`
	DeliveryAttempt int    `json:"deliveryAttempt,omitempty"`
}

// Envelope returns the wrapped push body Pub/Sub sends for m. deliveryAttempt is
// included only when positive (Pub/Sub sends it only with a dead-letter policy).
func Envelope(m *pubsubpb.PubsubMessage, subscription string, deliveryAttempt int) ([]byte, error) {
	var e envelope
	if len(m.GetData()) > 0 {
		e.Message.Data = base64.StdEncoding.EncodeToString(m.GetData())
	}
	e.Message.Attributes = m.GetAttributes()
	e.Message.MessageID, e.Message.MessageID2 = m.GetMessageId(), m.GetMessageId()
	pt := m.GetPublishTime().AsTime().UTC().Format(time.RFC3339Nano)
	e.Message.PublishTime, e.Message.PublishTime2 = pt, pt
	e.Message.OrderingKey = m.GetOrderingKey()
	e.Subscription = subscription
	e.DeliveryAttempt = deliveryAttempt
	return json.Marshal(e)
}

func (b *Bridge) post(ctx context.Context, m *pubsubpb.PubsubMessage, attempt int) (int, error) {
	da := 0
	if b.dlq {
		da = attempt
	}
	body, err := Envelope(m, b.o.Subscription, da)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.o.Endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if b.o.Authorization != nil {
		a, err := b.o.Authorization(ctx)
		if err != nil {
			return 0, fmt.Errorf("authorization: %w", err)
		}
		req.Header.Set("Authorization", a)
	}
	resp, err := b.o.HTTPClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, nil
}

// Acks reports whether a push endpoint's status acknowledges the message: only
// 102, 200, 201, 202 and 204 do (Pub/Sub push subscription docs).
func Acks(status int) bool {
	switch status {
	case 102, 200, 201, 202, 204:
		return true
	}
	return false
}

// Backoff is the retry policy's delay before delivery attempt+1: min × 2^(attempt−1),
// capped at max.
func Backoff(minB, maxB time.Duration, attempt int) time.Duration {
	d := minB
	for i := 1; i < attempt && d < maxB; i++ {
		d *= 2
	}
	return min(d, maxB)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
)

// TestPullWorker runs the example against Google's Pub/Sub fake: a message
// and its republished copy (same business key, new id) reach the supplier once,
// carrying the key and a fence, and the worker stops cleanly when its context
// ends.
func TestPullWorker(t *testing.T) {
	srv := pstest.NewServer()
	defer srv.Close()
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admin, err := pubsub.NewClient(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/test/topics/orders"}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SubscriptionAdminClient.CreateSubscription(ctx, &pubsubpb.Subscription{
		Name: "projects/test/subscriptions/orders-pull", Topic: "projects/test/topics/orders", AckDeadlineSeconds: 60}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var keys, fences []string
	sup := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys, fences = append(keys, r.Header.Get("Idempotency-Key")), append(fences, r.Header.Get("X-Fencing-Token"))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer sup.Close()
	env := map[string]string{
		"ONCEGATE_BACKEND": "memory", "ONCEGATE_NAMESPACE": "orders", "GOOGLE_CLOUD_PROJECT": "test",
		"ONCEGATE_LEASE": "60s", "ONCEGATE_HEARTBEAT": "20s", "ONCEGATE_WORK_DEADLINE": "30s",
		"ONCEGATE_PULL_SUBSCRIPTION": "orders-pull", "ONCEGATE_KEY_ATTRIBUTE": "order", "SUPPLIER_URL": sup.URL,
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, func(k string) string { return env[k] }, io.Discard) }()
	first := srv.Publish("projects/test/topics/orders", []byte(`{"order":"PO-1"}`), map[string]string{"order": "PO-1"})
	second := srv.Publish("projects/test/topics/orders", []byte(`{"order":"PO-1"}`), map[string]string{"order": "PO-1"})
	deadline := time.Now().Add(30 * time.Second)
	for srv.Message(first).Acks == 0 || srv.Message(second).Acks == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the two copies were not both acked within 30s")
		}
		time.Sleep(10 * time.Millisecond) // polling the fake's state
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 1 || keys[0] != "orders:PO-1" || fences[0] != "1" {
		t.Fatalf("supplier saw keys %q fences %q; want one call for orders:PO-1 at fence 1", keys, fences)
	}
}

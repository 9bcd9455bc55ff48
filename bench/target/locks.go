package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/oncegate/oncegate/bench/stores"
)

// locker takes a lock on key for lease and returns the function that releases
// it; a lock held by another is an error.
type locker func(ctx context.Context, key string, lease time.Duration) (unlock func(context.Context) error, err error)

// redisLockers are the plain Redis locks the Redis gateway is compared with in
// the same run, each taken on the message id around the handler function:
// go-redsync's Mutex (Lock, Unlock; one try) and bsm/redislock's Obtain and
// Release. Each is two round trips per message, like the gateway's claim and
// complete, but keeps no record: a redelivery after the unlock runs again.
func redisLockers(st *stores.Store) map[string]locker {
	rs := redsync.New(goredis.NewPool(st.Redis))
	rl := redislock.New(st.Redis)
	return map[string]locker{
		"redsync": func(ctx context.Context, key string, lease time.Duration) (func(context.Context) error, error) {
			m := rs.NewMutex(key, redsync.WithExpiry(lease), redsync.WithTries(1))
			if err := m.LockContext(ctx); err != nil {
				return nil, err
			}
			return func(ctx context.Context) error {
				ok, err := m.UnlockContext(ctx)
				if err == nil && !ok {
					err = errors.New("redsync: lock lost before unlock")
				}
				return err
			}, nil
		},
		"redislock": func(ctx context.Context, key string, lease time.Duration) (func(context.Context) error, error) {
			l, err := rl.Obtain(ctx, key, lease, nil)
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		},
	}
}

// locked is bare with the handler function run under lock, taken on prefix +
// the message id for lease: 503 when the lock is not obtained or not released.
func locked(lock locker, prefix string, lease time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, ok := readPush(w, r)
		if !ok {
			return
		}
		unlock, err := lock(r.Context(), prefix+m.MessageID, lease)
		if err != nil {
			http.Error(w, "lock", http.StatusServiceUnavailable)
			return
		}
		werr := work(r.Context(), m)
		if err := unlock(r.Context()); err != nil {
			http.Error(w, "unlock", http.StatusServiceUnavailable)
			return
		}
		if werr != nil {
			http.Error(w, "work", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// handleLocks serves each of redisLockers at POST /NAME when st is Redis.
func handleLocks(mux *http.ServeMux, st *stores.Store, name string, lease time.Duration) {
	if st.Kind != stores.Redis {
		return
	}
	for n, l := range redisLockers(st) {
		mux.Handle("POST /"+n, locked(l, fmt.Sprintf("%s:%s:", name, n), lease))
	}
}

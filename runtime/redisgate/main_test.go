package redisgate_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/oncegate/oncegate/internal/testenv"
	"github.com/oncegate/oncegate/runtime/gate"
	"github.com/oncegate/oncegate/runtime/redisgate"
)

func TestMain(m *testing.M) {
	testenv.Main(m)
	stopCluster()
}

// newClient returns a client for the standalone server at addr, closed when the
// test ends.
func newClient(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:                     addr,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// uniquePrefix returns a key prefix no other test uses.
func uniquePrefix(t testing.TB) string {
	return testenv.UniqueName(t, "og") + ":"
}

// newStore returns a Store on the shared Redis under a unique prefix.
func newStore(t testing.TB) (*redisgate.Store, *redis.Client) {
	t.Helper()
	c := newClient(t, testenv.Redis(t))
	s, err := redisgate.New(c, &redisgate.Options{Prefix: uniquePrefix(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { deletePrefix(t, c, s.Prefix()) })
	return s, c
}

// claimReq is a claim with a fresh token.
func claimReq(key string, lease time.Duration) gate.ClaimRequest {
	return gate.ClaimRequest{Key: key, Token: "tok-" + strconv.FormatInt(time.Now().UnixNano(), 36), Owner: "test", Lease: lease, TTL: time.Hour}
}

// mustClaim claims key and fails the test unless the answer is want.
func mustClaim(t testing.TB, b gate.Backend, key string, lease time.Duration, want gate.ClaimStatus) gate.Record {
	t.Helper()
	res, err := b.Claim(context.Background(), claimReq(key, lease))
	if err != nil {
		t.Fatalf("Claim(%.40q): %v", key, err)
	}
	if res.Status != want {
		t.Fatalf("Claim(%.40q) = %v (fence %d), want %v", key, res.Status, res.Record.Fence, want)
	}
	return res.Record
}

// scanKeys returns every key matching pattern on every master of c.
func scanKeys(t testing.TB, c redis.UniversalClient, pattern string) []string {
	t.Helper()
	ctx := context.Background()
	var keys []string
	scan := func(ctx context.Context, node *redis.Client) error {
		iter := node.Scan(ctx, 0, pattern, 1000).Iterator()
		var mine []string
		for iter.Next(ctx) {
			mine = append(mine, iter.Val())
		}
		if err := iter.Err(); err != nil {
			return err
		}
		clusterMu.Lock()
		keys = append(keys, mine...)
		clusterMu.Unlock()
		return nil
	}
	var err error
	switch c := c.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	default:
		t.Fatalf("scanKeys: unsupported client %T", c)
	}
	if err != nil {
		t.Fatalf("scan %q: %v", pattern, err)
	}
	return keys
}

// globEscape escapes SCAN MATCH metacharacters.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// deletePrefix deletes every key under prefix, unknown records included (they
// never expire on their own).
func deletePrefix(t testing.TB, c redis.UniversalClient, prefix string) {
	t.Helper()
	for _, k := range scanKeys(t, c, globEscape(prefix)+"*") {
		if err := c.Del(context.Background(), k).Err(); err != nil {
			t.Errorf("cleanup: DEL %.60q: %v", k, err)
		}
	}
}

// checkTTLs fails the test for every key under prefix that is not a record, for
// every record but an unknown one without an expiry (PEXPIRETIME), for every
// unknown record with one, and for every old-format (hash) record whose expiry is
// not exactly its expires_at field. It returns how many keys it checked. Nothing
// may write under prefix meanwhile.
func checkTTLs(t testing.TB, c redis.UniversalClient, prefix string) int {
	t.Helper()
	ctx := context.Background()
	keys := scanKeys(t, c, globEscape(prefix)+"*")
	for _, k := range keys {
		var typ *redis.StatusCmd
		var expiry *redis.Cmd
		var value *redis.StringCmd
		var fields *redis.SliceCmd
		if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error { // one atomic read
			typ = p.Type(ctx, k)
			expiry = p.Do(ctx, "PEXPIRETIME", k)
			return nil
		}); err != nil {
			t.Fatalf("read %.60q: %v", k, err)
		}
		at, err := expiry.Int64()
		if err != nil {
			t.Fatalf("PEXPIRETIME %.60q: %v", k, err)
		}
		if at == -2 {
			continue // expired between the scan and the read
		}
		var state, expires string
		switch typ.Val() {
		case "string":
			value = c.Get(ctx, k)
			if errors.Is(value.Err(), redis.Nil) {
				continue // expired after the first read
			}
			v := value.Val()
			if !strings.HasPrefix(v, "og1 ") {
				t.Errorf("key %.60q under the prefix is not a record: %.40q", k, v)
				continue
			}
			state, _, _ = strings.Cut(v[len("og1 "):], " ")
			expires = strconv.FormatInt(at, 10)
			if at == -1 {
				expires = ""
			}
		case "hash":
			fields = c.HMGet(ctx, k, "state", "expires_at")
			h := fields.Val()
			state, _ = h[0].(string)
			expires, _ = h[1].(string)
		}
		switch {
		case state == "":
			t.Errorf("key %.60q under the prefix is not a record", k)
		case state == string(gate.StateUnknown):
			if at != -1 || expires != "" {
				t.Errorf("unknown record %.60q has expiry %d and expires_at %q; it must survive until resolved", k, at, expires)
			}
		case at == -1:
			t.Errorf("%s record %.60q has no TTL", state, k)
		case strconv.FormatInt(at, 10) != expires:
			t.Errorf("%s record %.60q expires at %d, but its expires_at is %q", state, k, at, expires)
		}
	}
	return len(keys)
}

func itoa(n int) string { return strconv.Itoa(n) }

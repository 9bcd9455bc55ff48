package faults_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/gate"
)

// hostileKeys are keys chosen to break a careless store: each pair that differs
// by bytes a lossy layer drops or folds (NUL termination, invalid UTF-8
// replaced by U+FFFD, Unicode normalization, case or trailing-space folding,
// truncation or hashing at a length limit, glob and SQL metacharacters) must
// stay two records.
func hostileKeys() []string {
	mb := strings.Repeat("k", 1<<20)
	keys := []string{
		mb, mb[:len(mb)-1] + "l", // 1 MiB, differing in the last byte
		"a", "a\x00", "a\x00b", "a\x00c", "\x00", "\x00\x00",
		"\xff", "\xfe", "\xff\xfe", "\ufffd", "\ufffd\ufffd", "a\xc3", "a\xc3\xa9",
		"\u00e9", "e\u0301", // é in NFC and NFD
		"\u212b", "\u00c5", "A\u030a", // Å: angstrom sign, NFC, NFD
		"Key", "key", "KEY", "k", "k ", " k", "k\t", "k\n", "k\r\n",
		"ß", "ss", "ﬃ", "ffi", // case folding and compatibility forms
		"*", "?", "[a]", "%", "_", "a%", "a_", `\`, `\\`, "'", `'; DROP TABLE oncegate_records; --`, `"`, "`",
		"{tag}", "{tag}x", "{}", "\u202eevil", "😀", "\U0010FFFF",
		"og-sha256:", "og-sha256:" + hex.EncodeToString(make([]byte, 32)),
	}
	for _, n := range []int{511, 512, 513, 1499, 1500, 1501} { // the SQL and Datastore limits
		base := strings.Repeat("p", n)
		keys = append(keys, base, base+"1", base+"2", base+"\xff1", base+"\xff2")
	}
	return keys
}

// TestHostileKeys runs every hostile key through the gateway on every backend,
// with and without a namespace: each key runs once and is a duplicate the
// second time, the body sees it byte for byte, the stored record reports it
// byte for byte, and no two keys share a record. The empty key is refused with
// gate.ErrInvalidKey before any claim.
func TestHostileKeys(t *testing.T) {
	for _, b := range everyBackend {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			backend := b.make(t)
			f := figures{Class: "hostile keys", Backend: b.name}
			refused := 0
			for _, ns := range []string{"", "orders"} {
				keys := hostileKeys()
				if ns == "" { // a literal key shaped like another key's hash
					sum := sha256.Sum256([]byte("\xff"))
					keys = append(keys, "og-sha256:"+hex.EncodeToString(sum[:]))
				}
				g, err := gate.New(backend, &gate.Options{Namespace: ns, Logger: quietLog})
				if err != nil {
					t.Fatal(err)
				}
				f.Messages += len(keys) + 1
				refused += hostileRound(t, g, keys, b.limit, &f)
			}
			f.Note = "every key byte-exact and distinct (1 MiB, NUL, invalid UTF-8, NFC/NFD, case, length limits, metacharacters); the empty key refused with ErrInvalidKey"
			if refused > 0 {
				f.Note += fmt.Sprintf("; %d keys over the 1 MiB entity limit refused with an error naming it (answered store-unavailable, 503)", refused)
			}
			report(t, f)
		})
	}
}

// hostileRound runs keys through g twice and returns how many were refused
// for being longer than limit (when limit is set).
func hostileRound(t *testing.T, g *gate.Gate, keys []string, limit int, f *figures) (refused int) {
	t.Helper()
	ctx := context.Background()
	f.Tried++
	if err := g.Lock(ctx, "", func(context.Context, gate.Claim) error { return errors.New("ran") }); !errors.Is(err, gate.ErrInvalidKey) || gate.OutcomeOf(err) != gate.OutcomeRejected {
		t.Errorf("empty key: %v; want ErrInvalidKey (rejected)", err)
	} else {
		f.Processed++
	}
	ran := make([]int, len(keys))
	skip := make([]bool, len(keys))
	for round := range 2 {
		for i, k := range keys {
			if skip[i] {
				continue
			}
			f.Tried++
			err := g.Lock(ctx, k, func(_ context.Context, c gate.Claim) error {
				ran[i]++
				if c.Key != g.Key(k) {
					t.Errorf("key %s reached the body as %s", show(k), show(c.Key))
				}
				return nil
			})
			if limit > 0 && len(g.Key(k)) > limit && err != nil && ran[i] == 0 {
				if !strings.Contains(err.Error(), "at most") {
					t.Errorf("key %s over the backend's limit refused without naming it: %s", show(k), show(err.Error()))
				}
				skip[i] = true
				refused++
				f.Processed++
				continue
			}
			want := gate.OutcomeRan
			if round == 1 {
				want = gate.OutcomeDuplicate
			}
			if o := gate.OutcomeOf(err); o != want {
				t.Errorf("round %d, key %s: %s (%s); want %s", round, show(k), o, show(fmt.Sprint(err)), want)
				if round == 0 && o == gate.OutcomeDuplicate {
					f.Losses++ // collided with an earlier key: its work would never run
				}
			}
		}
	}
	ins := g.Backend()
	for i, k := range keys {
		if skip[i] {
			continue
		}
		switch {
		case ran[i] == 1:
			f.Processed++
		case ran[i] > 1:
			f.Duplicates += ran[i] - 1
		}
		if ins == nil {
			continue
		}
		rec, found, err := ins.Inspect(ctx, g.Key(k))
		if err != nil || !found || !bytes.Equal([]byte(rec.Key), []byte(g.Key(k))) || rec.State != gate.StateDone {
			t.Errorf("Inspect(%s) = key %s state %s, found %v, %v; want the key byte for byte, done", show(g.Key(k)), show(rec.Key), rec.State, found, err)
		}
	}
	return refused
}

// show quotes a key or an error text for a message, cutting long ones.
func show(k string) string {
	if len(k) > 120 {
		return fmt.Sprintf("%q… (%d bytes)", k[:120], len(k))
	}
	return fmt.Sprintf("%q", k)
}

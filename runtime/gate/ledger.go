package gate

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Codec encodes the stored result of Do. The default is JSON.
type Codec interface {
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// AEAD seals stored results. tink-go's tink.AEAD (from aead.New on a keyset
// handle, so key rotation and KMS-wrapped keysets work) satisfies it as is.
type AEAD interface {
	Encrypt(plaintext, associatedData []byte) ([]byte, error)
	Decrypt(ciphertext, associatedData []byte) ([]byte, error)
}

// ErrSealedResult: a stored result did not open with the Gate's AEAD (tampered,
// moved from another key, or sealed with a key no longer in the keyset). Returned
// by Do; the result is never returned unverified.
var ErrSealedResult = errors.New("oncegate: stored result does not open")

// Call describes one Do invocation.
type Call struct {
	// Key is the idempotency key (namespaced by the Gate); never empty.
	Key string
	// Payload, when non-nil, is fingerprinted (SHA-256): a later call on the same
	// key with a different payload fails with ErrKeyReuse, on every path.
	Payload []byte
	// Wait, when positive, makes a call that finds a live holder poll (with
	// backoff from 50ms up to 1s) for up to Wait until the holder finishes, and
	// return its stored result; past Wait it returns ErrInProgress. Zero fails
	// fast.
	Wait time.Duration
}

// Do runs fn at most once per key and returns its value. executed reports
// whether this call ran fn; a duplicate returns the stored result (decoded with
// the Gate's Codec, opened with its AEAD when set) with executed false and a nil
// error. fn's error releases the claim (a *BodyError) unless it is Permanent, in
// which case the key is recorded failed and later calls return ErrFailed. The
// other errors are those of Lock, plus ErrSealedResult and a codec error.
func Do[T any](ctx context.Context, g *Gate, c Call, fn func(ctx context.Context, cl Claim) (T, error)) (v T, executed bool, err error) {
	var fp []byte
	if c.Payload != nil {
		sum := sha256.Sum256(c.Payload)
		fp = sum[:]
	}
	key := g.Key(c.Key)
	body := func(ctx context.Context, cl Claim) ([]byte, error) {
		executed = true
		out, ferr := fn(ctx, cl)
		if ferr != nil {
			return nil, ferr
		}
		v = out
		b, eerr := g.encodeResult(key, out)
		if eerr != nil {
			// The effect ran: record it done without a result rather than run it again.
			g.opts.Logger.Error("oncegate: result not stored", "key", key, "fence", cl.Fence, "err", eerr)
		}
		return b, nil
	}
	backoff := 50 * time.Millisecond
	deadline := time.Now().Add(c.Wait)
	for {
		res := g.run(ctx, call{key: c.Key, mode: VerbLock, fingerprint: fp}, verbBody{stored: body})
		switch {
		case res.Outcome == OutcomeDuplicate:
			var zero T
			if derr := g.decodeResult(key, res.Record.Result, &zero); derr != nil {
				return zero, false, derr
			}
			return zero, false, nil
		case res.Outcome == OutcomeInProgress && time.Now().Add(backoff).Before(deadline):
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return v, false, ctx.Err()
			case <-t.C:
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		return v, executed, res.Err
	}
}

// aad binds a sealed result to its namespaced key: a ciphertext copied to another
// key, or another namespace, does not open.
func aad(key string) []byte { return []byte("oncegate/result/v1\x00" + key) }

func (g *Gate) encodeResult(key string, v any) ([]byte, error) {
	b, err := g.opts.Codec.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result of %q: %w", key, err)
	}
	if g.opts.AEAD == nil {
		return b, nil
	}
	sealed, err := g.opts.AEAD.Encrypt(b, aad(key))
	if err != nil {
		return nil, fmt.Errorf("seal result of %q: %w", key, err)
	}
	return sealed, nil
}

func (g *Gate) decodeResult(key string, stored []byte, v any) error {
	if len(stored) == 0 {
		return nil
	}
	if g.opts.AEAD != nil {
		plain, err := g.opts.AEAD.Decrypt(stored, aad(key))
		if err != nil {
			return fmt.Errorf("%w: key %q: %w", ErrSealedResult, key, err)
		}
		stored = plain
	}
	if err := g.opts.Codec.Unmarshal(stored, v); err != nil {
		return fmt.Errorf("decode stored result of %q: %w", key, err)
	}
	return nil
}

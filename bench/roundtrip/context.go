package roundtrip

import "context"

type ctxKey struct{}

// WithCounter returns a context carrying c: every counter in this package that
// counts a call made with that context (or one derived from it) adds the same
// count to c too, so one request's round trips can be told apart from those of
// requests running beside it.
func WithCounter(ctx context.Context, c *Counter) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// FromContext returns the counter WithCounter put in ctx, or nil.
func FromContext(ctx context.Context) *Counter {
	c, _ := ctx.Value(ctxKey{}).(*Counter)
	return c
}

// add counts name in c and in ctx's counter, if any.
func add(ctx context.Context, c *Counter, name string) {
	c.Add(name, 1)
	if cc := FromContext(ctx); cc != nil && cc != c {
		cc.Add(name, 1)
	}
}

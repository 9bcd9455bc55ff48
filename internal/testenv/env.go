package testenv

import "maps"

// Env is an environment for code that reads its configuration through a
// getenv function (gateenv.Options.Getenv, sizing.FromEnv).
type Env map[string]string

// Get reads one variable ("" when unset); pass e.Get as the getenv function.
func (e Env) Get(k string) string { return e[k] }

// With returns a copy of e with kv (name, value, name, value, …) applied; an
// empty value deletes the variable.
func (e Env) With(kv ...string) Env {
	out := maps.Clone(e)
	if out == nil {
		out = Env{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

package sizing

import (
	"errors"
	"strconv"
	"strings"
)

// ErrUnsafePlan matches (errors.Is) every *PlanError returned by Validate,
// Recommend and FromEnv.
var ErrUnsafePlan = errors.New("sizing: unsafe plan")

// Violation is one broken rule of a Plan.
type Violation struct {
	// Field is the Plan field to change, e.g. "AckDeadline".
	Field string
	// Message is one sentence naming the numbers and the fix, e.g.
	// "Subscription ack deadline must be 10s–600s (got 5s); raise it or leave
	// zero for the default".
	Message string
	// Invariant is the invariant broken (1–5, see the package documentation),
	// or 0 for a value outside a documented range.
	Invariant int
}

// Error returns v.Message.
func (v Violation) Error() string { return v.Message }

// PlanError lists every violation of a plan, in a fixed order (field ranges
// first, then invariants 5, 1, 2, 3 and 4). It matches ErrUnsafePlan with errors.Is, and
// errors.As finds each Violation through Unwrap.
type PlanError struct {
	Violations []Violation
}

// Error returns the violations, one sentence per line after the first.
func (e *PlanError) Error() string {
	if len(e.Violations) == 1 {
		return "sizing: " + e.Violations[0].Message
	}
	var b strings.Builder
	b.WriteString("sizing: ")
	b.WriteString(strconv.Itoa(len(e.Violations)))
	b.WriteString(" problems with the plan:")
	for _, v := range e.Violations {
		b.WriteString("\n  - ")
		b.WriteString(v.Message)
	}
	return b.String()
}

// Is reports whether target is ErrUnsafePlan.
func (e *PlanError) Is(target error) bool { return target == ErrUnsafePlan }

// Unwrap returns the violations as errors.
func (e *PlanError) Unwrap() []error {
	out := make([]error, len(e.Violations))
	for i, v := range e.Violations {
		out[i] = v
	}
	return out
}

// Fields returns the names of the fields at fault, in order, without repeats.
func (e *PlanError) Fields() []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range e.Violations {
		if !seen[v.Field] {
			seen[v.Field] = true
			out = append(out, v.Field)
		}
	}
	return out
}

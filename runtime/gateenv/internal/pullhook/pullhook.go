// Package pullhook hands gateenv's pull constructor core to gateenv/pullenv
// without making it public API of gateenv, and without gateenv importing the
// Pub/Sub client (pullenv does): a push-only program that imports gateenv links
// no Pub/Sub package.
//
// gateenv sets New from its init; pullenv imports gateenv, so New is set
// before any pullenv code runs.
package pullhook

import (
	"context"

	"github.com/oncegate/oncegate/sizing"
)

// New is gateenv's pull constructor core. opts is a *gateenv.Options (nil
// allowed) and cfg a *gateenv.Config (the types live in gateenv, which imports
// this package, hence any). On success pp is the validated pull plan and sub
// the ONCEGATE_PULL_SUBSCRIPTION value.
var New func(ctx context.Context, opts any) (cfg any, pp sizing.PullPlan, sub string, err error)

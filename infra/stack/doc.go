// Package stack is the oncegate reference stack's Pulumi program: one
// components.Consumer sized by one plan read from the stack configuration.
// The keys, their defaults and the commands to deploy are in docs/deploy.md.
package stack

// Command infra runs the oncegate reference stack (Pulumi.yaml: runtime go,
// main infra/). The program lives in package stack; see docs/deploy.md.
package main

import (
	"github.com/oncegate/oncegate/infra/stack"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() { pulumi.Run(stack.Program) }

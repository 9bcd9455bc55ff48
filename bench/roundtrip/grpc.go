package roundtrip

import (
	"context"
	"path"

	"google.golang.org/grpc"
)

// GRPCCalls counts unary gRPC calls (each one round trip; the Datastore client
// makes only unary calls). A call the client library retries counts once per
// attempt that reaches the interceptor chain.
const GRPCCalls = "grpc_calls"

// UnaryInterceptor returns a gRPC client interceptor counting every unary call
// in c (and in its context's counter) under GRPCCalls and under "rpc_" and the
// method's name ("rpc_Lookup", "rpc_Commit").
// Install it with grpc.WithChainUnaryInterceptor, for example through
// option.WithGRPCDialOption.
func UnaryInterceptor(c *Counter) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		add(ctx, c, GRPCCalls)
		add(ctx, c, "rpc_"+path.Base(method))
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

package dsfake

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"

	"cloud.google.com/go/datastore"
	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Project is the project id Client uses. Any non-empty project id works; each
// is a separate set of databases.
const Project = "oncegate-test"

// Server is a running fake. It is safe for concurrent use; each RPC is atomic.
type Server struct {
	pb.UnimplementedDatastoreServer

	st   *store
	f    *faults
	gs   *grpc.Server
	addr string
	once sync.Once
}

// New starts a fake on a free loopback TCP port. Call Close when done.
func New() (*Server, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("dsfake: listen: %w", err)
	}
	s := &Server{st: newStore(), f: newFaults(), addr: lis.Addr().String()}
	s.gs = grpc.NewServer(grpc.UnaryInterceptor(s.f.intercept))
	pb.RegisterDatastoreServer(s.gs, s)
	go func() { _ = s.gs.Serve(lis) }()
	return s, nil
}

// Start starts a fake and closes it when t's test ends. It fails t if the fake
// cannot listen.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Addr is the fake's host:port, usable as DATASTORE_EMULATOR_HOST.
func (s *Server) Addr() string { return s.addr }

// Close stops the server at once, failing RPCs in flight. It is idempotent.
func (s *Server) Close() { s.once.Do(s.gs.Stop) }

// Reset deletes every entity and transaction and clears faults and counters.
func (s *Server) Reset() {
	s.st.mu.Lock()
	s.st.dbs, s.st.txns, s.st.aborted = map[dbID]*database{}, map[string]*txn{}, map[string]bool{}
	s.st.mu.Unlock()
	s.f.reset()
}

// Len returns how many entities the fake holds, across all databases.
func (s *Server) Len() int {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	n := 0
	for _, d := range s.st.dbs {
		n += len(d.entities)
	}
	return n
}

// ClientOptions are the client options that point cloud.google.com/go/datastore
// at the fake without credentials, as DATASTORE_EMULATOR_HOST would. The client
// keeps its default gRPC retry policy, so an RPC failing with codes.Unavailable
// is retried by the client library itself, as against the real service.
func (s *Server) ClientOptions() []option.ClientOption {
	return []option.ClientOption{
		option.WithEndpoint("passthrough:///" + s.addr),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}
}

// NewClient returns a client of projectID and databaseID ("" for the default
// database) talking to the fake. The caller closes it.
func (s *Server) NewClient(ctx context.Context, projectID, databaseID string) (*datastore.Client, error) {
	c, err := datastore.NewClientWithDatabase(ctx, projectID, databaseID, s.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("dsfake: new client: %w", err)
	}
	return c, nil
}

// Client returns a client of Project and databaseID ("" for the default
// database) talking to the fake, closed when t's test ends.
func (s *Server) Client(t testing.TB, databaseID string) *datastore.Client {
	t.Helper()
	c, err := s.NewClient(context.Background(), Project, databaseID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

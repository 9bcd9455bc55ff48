package dsfake

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// maxNameBytes is the longest key name, kind or namespace, and the longest
// indexed string or blob value (source: "Limits", Firestore in Datastore mode
// documentation: 1,500 bytes).
const maxNameBytes = 1500

func ts(t time.Time) *timestamppb.Timestamp { return timestamppb.New(t) }

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// reserved reports whether name has the reserved form __*__.
func reserved(name string) bool {
	return len(name) >= 4 && strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__")
}

func checkName(what, name string) error {
	switch {
	case len(name) > maxNameBytes:
		return invalid("The %s is longer than %d bytes.", what, maxNameBytes)
	case reserved(name):
		return invalid("The %s %q is reserved.", what, name)
	}
	return nil
}

// normKey validates k against the request's database and returns a copy whose
// partition id names the project, database and namespace. incompleteOK allows a
// last path element without id or name (an insert or upsert to be allocated).
func normKey(db dbID, k *pb.Key, incompleteOK bool) (*pb.Key, error) {
	if k == nil || len(k.Path) == 0 {
		return nil, invalid("A key must have a non-empty path.")
	}
	p := k.GetPartitionId()
	if p.GetProjectId() != "" && p.GetProjectId() != db.project {
		return nil, invalid("mismatched projects: %q and %q", p.GetProjectId(), db.project)
	}
	if p.GetDatabaseId() != "" && p.GetDatabaseId() != db.database {
		return nil, invalid("mismatched databases: %q and %q", p.GetDatabaseId(), db.database)
	}
	if ns := p.GetNamespaceId(); ns != "" {
		if err := checkName("namespace", ns); err != nil {
			return nil, err
		}
	}
	for i, el := range k.Path {
		if el.Kind == "" {
			return nil, invalid("A key path element must not have an empty kind.")
		}
		if err := checkName("kind", el.Kind); err != nil {
			return nil, err
		}
		switch id := el.IdType.(type) {
		case *pb.Key_PathElement_Name:
			if id.Name == "" {
				return nil, invalid("A key path element must not have an empty name.")
			}
			if err := checkName("key name", id.Name); err != nil {
				return nil, err
			}
		case *pb.Key_PathElement_Id:
			if id.Id <= 0 {
				return nil, invalid("A key path element must not have a non-positive id.")
			}
		default:
			if i < len(k.Path)-1 || !incompleteOK {
				return nil, invalid("A key path element must have an id or a name (key is incomplete).")
			}
		}
	}
	n := proto.Clone(k).(*pb.Key)
	n.PartitionId = &pb.PartitionId{ProjectId: db.project, DatabaseId: db.database, NamespaceId: p.GetNamespaceId()}
	return n, nil
}

// incomplete reports whether k's last path element lacks an id and a name.
func incomplete(k *pb.Key) bool {
	return k.Path[len(k.Path)-1].IdType == nil
}

// keyString is the map key of a complete key within one database.
func keyString(k *pb.Key) string {
	var b strings.Builder
	b.WriteString(k.GetPartitionId().GetNamespaceId())
	for _, el := range k.Path {
		b.WriteByte(0)
		b.WriteString(el.Kind)
		b.WriteByte(0)
		if name, ok := el.IdType.(*pb.Key_PathElement_Name); ok {
			b.WriteString("n" + name.Name)
		} else {
			b.WriteString("i" + strconv.FormatInt(el.GetId(), 10))
		}
	}
	return b.String()
}

// compareKeys orders keys as the service does: by namespace, then path element
// by element (kind, then ids before names, ids numerically), parents first.
func compareKeys(a, b *pb.Key) int {
	if c := cmp.Compare(a.GetPartitionId().GetNamespaceId(), b.GetPartitionId().GetNamespaceId()); c != 0 {
		return c
	}
	for i := 0; i < len(a.Path) && i < len(b.Path); i++ {
		x, y := a.Path[i], b.Path[i]
		if c := cmp.Compare(x.Kind, y.Kind); c != 0 {
			return c
		}
		_, xn := x.IdType.(*pb.Key_PathElement_Name)
		_, yn := y.IdType.(*pb.Key_PathElement_Name)
		switch {
		case xn && yn:
			if c := cmp.Compare(x.GetName(), y.GetName()); c != 0 {
				return c
			}
		case xn:
			return 1
		case yn:
			return -1
		default:
			if c := cmp.Compare(x.GetId(), y.GetId()); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(a.Path), len(b.Path))
}

// hasAncestor reports whether anc's path is a prefix of k's (a key is its own
// ancestor), in the same namespace.
func hasAncestor(k, anc *pb.Key) bool {
	if len(anc.Path) > len(k.Path) ||
		k.GetPartitionId().GetNamespaceId() != anc.GetPartitionId().GetNamespaceId() {
		return false
	}
	for i, el := range anc.Path {
		x := k.Path[i]
		if x.Kind != el.Kind || x.GetId() != el.GetId() || x.GetName() != el.GetName() {
			return false
		}
	}
	return true
}

func kindOf(k *pb.Key) string { return k.Path[len(k.Path)-1].Kind }

func keyDebug(k *pb.Key) string {
	parts := make([]string, 0, len(k.Path))
	for _, el := range k.Path {
		if n, ok := el.IdType.(*pb.Key_PathElement_Name); ok {
			parts = append(parts, fmt.Sprintf("%s,%q", el.Kind, n.Name))
		} else {
			parts = append(parts, fmt.Sprintf("%s,%d", el.Kind, el.GetId()))
		}
	}
	return strings.Join(parts, "/")
}

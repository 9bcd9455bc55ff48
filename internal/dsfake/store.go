package dsfake

import (
	"encoding/binary"
	"sync"
	"time"

	pb "cloud.google.com/go/datastore/apiv1/datastorepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// dbID names one database: the project and database id of a request. The
// default database is the empty id, as on the wire.
type dbID struct{ project, database string }

// stored is one entity and its bookkeeping.
type stored struct {
	entity  *pb.Entity // key normalized by normKey
	version int64      // store version of the commit that last wrote it
	created time.Time
	updated time.Time
}

// database is the entities of one dbID, keyed by keyString.
type database struct {
	entities map[string]*stored
	// modified is the store version of the last write or delete of a key; it
	// outlives deletes so a transaction that read "missing" sees a later insert
	// followed by a delete as a change.
	modified map[string]int64
}

// txn is an open read-write or read-only transaction.
type txn struct {
	db       dbID
	readOnly bool
	reads    map[string]int64 // keyString → modified version when first read
}

// store is the fake's state. Every method runs under mu, so each RPC is atomic.
type store struct {
	mu      sync.Mutex
	version int64 // bumped by every commit that writes
	nextTx  uint64
	nextID  int64
	dbs     map[dbID]*database
	txns    map[string]*txn
	aborted map[string]bool // aborted transactions, until rolled back
}

func newStore() *store {
	return &store{dbs: map[dbID]*database{}, txns: map[string]*txn{}, aborted: map[string]bool{}}
}

func (s *store) db(id dbID) *database {
	d, ok := s.dbs[id]
	if !ok {
		d = &database{entities: map[string]*stored{}, modified: map[string]int64{}}
		s.dbs[id] = d
	}
	return d
}

// errTxnInvalid is what the real service answers for a finished or unknown
// transaction (see google-cloud-go issue 1434).
var errTxnInvalid = status.Error(codes.InvalidArgument,
	"The referenced transaction has expired or is no longer valid.")

// errContention is what the real service answers when a commit loses a race.
var errContention = status.Error(codes.Aborted,
	"Aborted due to cross-transaction contention. This occurs when multiple "+
		"transactions attempt to access the same data, requiring Datastore to abort "+
		"at least one in order to enforce serializability.")

// begin opens a transaction and returns its id.
func (s *store) begin(db dbID, opts *pb.TransactionOptions) ([]byte, error) {
	t := &txn{db: db, reads: map[string]int64{}}
	if ro := opts.GetReadOnly(); ro != nil {
		if ro.GetReadTime() != nil {
			return nil, status.Error(codes.Unimplemented, "dsfake: read-only transactions at a read_time are not supported")
		}
		t.readOnly = true
	}
	s.nextTx++
	id := binary.BigEndian.AppendUint64([]byte("dsfake-tx-"), s.nextTx)
	s.txns[string(id)] = t
	return id, nil
}

// open returns the open transaction id of db.
func (s *store) open(db dbID, id []byte) (*txn, error) {
	t, ok := s.txns[string(id)]
	if !ok || t.db != db {
		return nil, errTxnInvalid
	}
	return t, nil
}

// readTxn resolves read options: the transaction a read belongs to (nil for a
// plain read) and, for new_transaction, the id of the transaction it began.
func (s *store) readTxn(db dbID, ro *pb.ReadOptions) (*txn, []byte, error) {
	switch c := ro.GetConsistencyType().(type) {
	case nil, *pb.ReadOptions_ReadConsistency_:
		return nil, nil, nil
	case *pb.ReadOptions_Transaction:
		t, err := s.open(db, c.Transaction)
		return t, nil, err
	case *pb.ReadOptions_NewTransaction:
		id, err := s.begin(db, c.NewTransaction)
		if err != nil {
			return nil, nil, err
		}
		return s.txns[string(id)], id, nil
	default:
		return nil, nil, status.Error(codes.Unimplemented, "dsfake: read_time reads are not supported")
	}
}

// noteRead records, on its first read in t, the version of the key it read.
func (s *store) noteRead(t *txn, d *database, ks string) {
	if t == nil {
		return
	}
	if _, ok := t.reads[ks]; !ok {
		t.reads[ks] = d.modified[ks]
	}
}

// conflict reports whether committing t would break serializability: something t
// read changed since it read it. A blind write (to an entity t never read) does
// not conflict, whatever was committed meanwhile: the transaction is serialized
// after that commit, as the Datastore emulator and Firestore in Datastore mode do
// (legacy Cloud Datastore's entity-group concurrency aborted it).
func (s *store) conflict(t *txn, d *database) bool {
	for ks, v := range t.reads {
		if d.modified[ks] != v {
			return true
		}
	}
	return false
}

// finish ends transaction id; aborted ones are remembered until rolled back.
func (s *store) finish(id []byte, aborted bool) {
	delete(s.txns, string(id))
	if aborted {
		s.aborted[string(id)] = true
	}
}

// rollback ends an open or aborted transaction.
func (s *store) rollback(db dbID, id []byte) error {
	if s.aborted[string(id)] {
		delete(s.aborted, string(id))
		return nil
	}
	if _, err := s.open(db, id); err != nil {
		return err
	}
	delete(s.txns, string(id))
	return nil
}

// result renders a stored entity (or, when st is nil, a missing key) as an
// EntityResult.
func (s *store) result(st *stored, key *pb.Key, keysOnly bool) *pb.EntityResult {
	if st == nil {
		return &pb.EntityResult{Entity: &pb.Entity{Key: key}, Version: s.version}
	}
	e := proto.Clone(st.entity).(*pb.Entity)
	if keysOnly {
		e.Properties = nil
	}
	return &pb.EntityResult{
		Entity: e, Version: st.version,
		CreateTime: ts(st.created), UpdateTime: ts(st.updated),
	}
}

package sqlgate_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/sqlgate"
)

func TestNewValidatesTable(t *testing.T) {
	db, err := sql.Open("sqlite", sqliteFile(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tests := []struct {
		table string
		ok    bool
	}{
		{"", true}, // default
		{"oncegate_records", true},
		{"Gate_2", true},
		{"_t", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"x; DROP TABLE y", false},
		{`x"; DROP TABLE y; --`, false},
		{"x`y", false},
		{"1records", false},
		{"records-1", false},
		{"schema.records", false},
		{"récords", false},
		{"a b", false},
		{"a\x00b", false},
	}
	for _, tt := range tests {
		s, err := sqlgate.New(db, sqlgate.SQLite, &sqlgate.Options{Table: tt.table})
		if tt.ok != (err == nil) {
			t.Errorf("New(table %q): err = %v, want ok=%v", tt.table, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "sqlgate.Options.Table") {
			t.Errorf("New(table %q): err %q does not name the field", tt.table, err)
		}
		if err == nil && tt.table == "" && s.Table() != sqlgate.DefaultTable {
			t.Errorf("default table = %q, want %q", s.Table(), sqlgate.DefaultTable)
		}
	}
	// A refused name reaches no SQL: the table the injection names survives.
	if _, err := db.Exec(`CREATE TABLE y (a INTEGER)`); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlgate.New(db, sqlgate.SQLite, &sqlgate.Options{Table: "x; DROP TABLE y"}); err == nil {
		t.Fatal("injection accepted")
	}
	if _, err := db.Exec(`SELECT a FROM y`); err != nil {
		t.Fatalf("table y: %v", err)
	}
}

func TestNewRejectsBadArguments(t *testing.T) {
	if _, err := sqlgate.New(nil, sqlgate.Postgres, nil); err == nil {
		t.Error("nil db accepted")
	}
	db, _ := sql.Open("sqlite", sqliteFile(t))
	defer db.Close()
	if _, err := sqlgate.New(db, sqlgate.Dialect(0), nil); err == nil {
		t.Error("dialect 0 accepted")
	}
	if _, err := sqlgate.New(db, sqlgate.Dialect(9), nil); err == nil {
		t.Error("dialect 9 accepted")
	}
}

func TestOpenRejectsUnknownScheme(t *testing.T) {
	for _, dsn := range []string{
		"redis://127.0.0.1:6379",
		"sqlserver://sa@host/db",
		"/tmp/gate.db",
		"",
		"mariadb://root@127.0.0.1/test",
	} {
		_, err := sqlgate.Open(context.Background(), dsn, nil)
		if err == nil {
			t.Fatalf("Open(%q) accepted", dsn)
		}
		for _, want := range []string{"postgres://", "postgresql://", "mysql://", "sqlite:"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Open(%q): error %q does not name %s", dsn, err, want)
			}
		}
	}
}

func TestOpenRejectsMalformedDSN(t *testing.T) {
	for _, dsn := range []string{
		"sqlite:",
		"sqlite::memory:",
		"sqlite:file:x.db",
		"mysql://",
		"mysql://root@host/db/extra",
		"mysql://root@host/db?timeout=notaduration",
	} {
		if s, err := sqlgate.Open(context.Background(), dsn, nil); err == nil {
			_ = s.Close()
			t.Errorf("Open(%q) accepted", dsn)
		}
	}
	if _, err := sqlgate.Open(context.Background(), "sqlite:"+sqliteFile(t), &sqlgate.Options{Table: "bad name"}); err == nil {
		t.Error("Open with a bad table accepted")
	}
}

func TestDialectString(t *testing.T) {
	for d, want := range map[sqlgate.Dialect]string{sqlgate.Postgres: "postgres", sqlgate.MySQL: "mysql", sqlgate.SQLite: "sqlite", 0: "invalid"} {
		if d.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(d), d.String(), want)
		}
	}
}

package sqlgate_test

import (
	"os"
	"strings"
	"testing"

	"github.com/oncegate/oncegate/runtime/sqlgate"
)

const (
	transactionsDoc = "../../docs/transactions.md"
	txExamples      = "txexample_test.go"
)

// fences returns the bodies of the doc's fenced blocks in language lang.
func fences(t *testing.T, doc, lang string) []string {
	t.Helper()
	var out []string
	rest := doc
	for {
		_, after, ok := strings.Cut(rest, "```"+lang+"\n")
		if !ok {
			return out
		}
		body, tail, ok := strings.Cut(after, "\n```")
		if !ok {
			t.Fatalf("unterminated ```%s block in %s", lang, transactionsDoc)
		}
		out = append(out, body)
		rest = tail
	}
}

// normalized returns s's lines with surrounding space trimmed and blank lines
// dropped, joined by newlines, so indentation does not matter.
func normalized(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return "\n" + strings.Join(lines, "\n") + "\n"
}

// TestTransactionsDocSnippets: every Go snippet of docs/transactions.md is a
// run of lines of an Example test (indentation aside), so each one compiles
// and runs with its output checked.
func TestTransactionsDocSnippets(t *testing.T) {
	doc, err := os.ReadFile(transactionsDoc)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(txExamples)
	if err != nil {
		t.Fatal(err)
	}
	examples := normalized(string(src))
	snippets := fences(t, string(doc), "go")
	if len(snippets) < 6 {
		t.Fatalf("found %d Go snippets in %s; the parser lost some", len(snippets), transactionsDoc)
	}
	for i, s := range snippets {
		if !strings.Contains(examples, normalized(s)) {
			t.Errorf("Go snippet %d of %s is not in %s:\n%s", i+1, transactionsDoc, txExamples, s)
		}
	}
}

// TestTransactionsDocLockSQL runs the doc's SQL for a PostgreSQL lock id and
// compares it with TxLockID for the default table.
func TestTransactionsDocLockSQL(t *testing.T) {
	doc, err := os.ReadFile(transactionsDoc)
	if err != nil {
		t.Fatal(err)
	}
	blocks := fences(t, string(doc), "sql")
	if len(blocks) != 1 {
		t.Fatalf("found %d SQL snippets in %s, want 1", len(blocks), transactionsDoc)
	}
	expr, hasPrefix := strings.CutPrefix(strings.TrimSpace(blocks[0]), "SELECT pg_advisory_xact_lock(")
	expr, hasSuffix := strings.CutSuffix(expr, ");")
	if !hasPrefix || !hasSuffix {
		t.Fatalf("the SQL snippet is not SELECT pg_advisory_xact_lock(…);:\n%s", blocks[0])
	}
	db := openDB(t, sqlgate.Postgres, nil)
	var id int64
	if err := db.QueryRow("SELECT " + expr).Scan(&id); err != nil {
		t.Fatalf("run the doc's expression: %v", err)
	}
	s, err := sqlgate.New(db, sqlgate.Postgres, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := s.TxLockID("invoice-series-A"); id != want {
		t.Fatalf("the doc's SQL gives %d, TxLockID(%q) in table %s is %d", id, "invoice-series-A", s.Table(), want)
	}
}

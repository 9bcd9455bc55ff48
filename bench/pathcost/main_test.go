package pathcost

import (
	"fmt"
	"os"
	"testing"

	"github.com/oncegate/oncegate/bench/stores"
	"github.com/oncegate/oncegate/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.Main(m)
	order := make([]string, len(stores.Kinds))
	for i, k := range stores.Kinds {
		order[i] = string(k)
	}
	if err := writeReport(order); err != nil {
		fmt.Fprintln(os.Stderr, "pathcost:", err)
		os.Exit(1)
	}
}

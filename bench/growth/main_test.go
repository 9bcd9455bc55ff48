package growth

import (
	"fmt"
	"os"
	"testing"

	"github.com/oncegate/oncegate/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.Main(m)
	if err := closeSeeded(); err != nil {
		fmt.Fprintln(os.Stderr, "growth: cleanup:", err)
	}
}

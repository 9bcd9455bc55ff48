package pullenv_test

import (
	"testing"

	"github.com/oncegate/oncegate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

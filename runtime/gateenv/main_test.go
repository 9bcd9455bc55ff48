package gateenv_test

import (
	"testing"

	"github.com/oncegate/oncegate/internal/testenv"

	// The tests open every backend through New, as the reference worker does.
	_ "github.com/oncegate/oncegate/runtime/gateenv/allbackends"
)

func TestMain(m *testing.M) { testenv.Main(m) }

package drivertest

import (
	"context"
	"errors"
	"testing"

	"github.com/windforce/windforce/store/driver"
)

var _ = register("Tx", testTx)

// testTx checks that a transaction commits what fn did, rolls back on an
// error, and that a savepoint's failure leaves the outer transaction going.
func testTx(t *testing.T, open Open) {
	t.Run("ErrorRollsBack", func(t *testing.T) {
		t.Parallel()
		d := open(t)
		boom := errors.New("boom")
		err := d.Executor().Tx(t.Context(), func(ex driver.Executor) error {
			return ex.Tx(t.Context(), func(driver.Executor) error { return boom })
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Tx = %v, want the error fn returned", err)
		}
	})
	t.Run("SavepointRollsBackAlone", func(t *testing.T) {
		t.Parallel()
		d := open(t)
		boom := errors.New("boom")
		calls := 0
		err := d.Executor().Tx(t.Context(), func(ex driver.Executor) error {
			if err := ex.Tx(t.Context(), func(driver.Executor) error { calls++; return boom }); !errors.Is(err, boom) {
				t.Errorf("savepoint = %v, want boom", err)
			}
			return ex.Tx(t.Context(), func(driver.Executor) error { calls++; return nil })
		})
		if err != nil || calls != 2 {
			t.Fatalf("Tx = %v after %d calls, want nil after 2", err, calls)
		}
	})
	t.Run("CanceledContext", func(t *testing.T) {
		t.Parallel()
		d := open(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := d.Executor().Tx(ctx, func(driver.Executor) error { return nil }); err == nil {
			t.Fatal("Tx on a canceled context succeeded")
		}
	})
}

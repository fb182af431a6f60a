package gateway

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestStorageFullIsRecognisedAndNamed(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("write blob: %w", syscall.ENOSPC),
		errors.New("sqlite: database or disk is full (13)"),
		fmt.Errorf("insert: %w", &pgconn.PgError{Code: "53100", Message: "could not extend file"}),
	} {
		if !IsStorageFull(err) {
			t.Errorf("%v not recognised as a full disk", err)
		}
	}
	for _, err := range []error{errors.New("constraint failed"), &pgconn.PgError{Code: "23505"}, nil} {
		if IsStorageFull(err) {
			t.Errorf("%v taken for a full disk", err)
		}
	}
	e := newServiceEnv(t)
	full := e.svc.StorageFull(syscall.ENOSPC)
	if full.Kind != KindStorageFull || full.Code != "storage_full" || !strings.HasPrefix(full.Message, "the gateway's disk is full") {
		t.Errorf("StorageFull = %+v", full)
	}
	pg := e.svc.StorageFull(&pgconn.PgError{Code: "53100", Message: "could not extend file"})
	if !strings.Contains(pg.Message, "could not extend file") {
		t.Errorf("PostgreSQL's words missing: %+v", pg)
	}
}

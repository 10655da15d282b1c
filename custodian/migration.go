package custodian

import (
	"context"
	"io"
	"time"

	"github.com/phc-project/phc/custodian/internal/engine"
	"github.com/phc-project/phc/custodian/internal/migration"
	"github.com/phc-project/phc/custodian/internal/model"
	"github.com/phc-project/phc/quarantine/importer"
)

// Migration bundles, archives and the quarantine are package migration's
// (custodian/internal/migration); the core runs its reads and writes and
// lends it what the rules keep beside the view.

type (
	// Archiver is the optional capability of a Vault to seal and open the
	// owner's export archives (see [migration.Archiver]).
	Archiver = migration.Archiver
	// ImportBundleInput is the input of an import of a migration bundle
	// (see [migration.ImportBundleInput]).
	ImportBundleInput = migration.ImportBundleInput
	// ImportMemoriesInput is one batch of an import from another memory
	// system (see [migration.ImportMemoriesInput]).
	ImportMemoriesInput = migration.ImportMemoriesInput
	// ImportExportInput is an import of another memory system's export
	// (see [migration.ImportExportInput]).
	ImportExportInput = migration.ImportExportInput
	// ImportPartsInput is an import of a bundle in parts (see
	// [migration.ImportPartsInput]).
	ImportPartsInput = migration.ImportPartsInput
)

func (s *Service) newMigration(cfg Config) *migration.Migration {
	arch, _ := cfg.Vault.(Archiver)
	return migration.New(migration.Config{Core: migrationCore{s}, Vault: arch, Cards: cfg.Cards, Schema: s.schema,
		Clock: s.eng.Clock, Store: s.eng.Store, Reentry: s.reentryFailures, DefaultTier: defaultSensitivity})
}

// migrationCore runs the migration's reads and writes.
type migrationCore struct{ s *Service }

func (c migrationCore) Write(op string, p Principal, fn func(migration.Tx, *engine.Batch) error) error {
	return c.s.write(op, p, func(st *state, b *batch) error { return fn(migrationTx{c.s, st}, b) })
}

func (c migrationCore) Read(op string, p Principal, fn func(migration.Tx) error) error {
	_, err := ownerRead(c.s, op, p, func(st *state) (struct{}, error) { return struct{}{}, fn(migrationTx{c.s, st}) })
	return err
}

// migrationTx lends the migration what the rules keep beside the view.
type migrationTx struct {
	s  *Service
	st *state
}

func (t migrationTx) View() *engine.State                   { return t.st.view }
func (t migrationTx) Card(op string) (model.Card, error)    { return t.s.card(t.st, op) }
func (t migrationTx) Erase(b *engine.Batch, r *claimRecord) { t.st.erase(b, r) }

func (t migrationTx) Keys() []byte {
	if t.st.keys == nil {
		return nil
	}
	return t.st.keys.Keys
}

func (t migrationTx) Pinned(id string) (model.Card, bool) {
	if pc := t.st.custodians[id]; pc != nil {
		return pc.Card, true
	}
	return model.Card{}, false
}

func (t migrationTx) CheckPersonas(op string, ids []string) ([]string, error) {
	return t.st.checkPersonas(op, ids)
}

func (t migrationTx) Readers(claims []*claimRecord, now time.Time) map[string]int {
	return t.st.readersOf(claims, now)
}

// Export seals the owner's archive (see [migration.Migration.Export]).
func (s *Service) Export(ctx context.Context, p Principal) ([]byte, error) {
	return s.mig.Export(ctx, p)
}

// Import opens an archive and restores or holds it (see
// [migration.Migration.Import]).
func (s *Service) Import(ctx context.Context, p Principal, in ImportInput) (ImportResult, error) {
	return s.mig.Import(ctx, p, in)
}

// ExportBundle makes a migration bundle for another custodian (see
// [migration.Migration.ExportBundle]).
func (s *Service) ExportBundle(ctx context.Context, p Principal, in ExportInput) ([]byte, BundleManifest, error) {
	return s.mig.ExportBundle(ctx, p, in)
}

// ExportBundleParts writes a bundle in parts to w (see
// [migration.Migration.ExportBundleParts]).
func (s *Service) ExportBundleParts(ctx context.Context, p Principal, in ExportInput, w io.Writer) (BundleManifest, error) {
	return s.mig.ExportBundleParts(ctx, p, in, w)
}

// ImportBundleParts holds a bundle in parts (see
// [migration.Migration.ImportBundleParts]).
func (s *Service) ImportBundleParts(ctx context.Context, p Principal, in ImportPartsInput) (ImportReport, error) {
	return s.mig.ImportBundleParts(ctx, p, in)
}

// ImportBundle holds a bundle's records in the quarantine (see
// [migration.Migration.ImportBundle]).
func (s *Service) ImportBundle(ctx context.Context, p Principal, in ImportBundleInput) (ImportReport, error) {
	return s.mig.ImportBundle(ctx, p, in)
}

// ImportMemories holds a batch of memories imported from another system
// (see [migration.Migration.ImportMemories]).
func (s *Service) ImportMemories(ctx context.Context, p Principal, in ImportMemoriesInput) (int, uint64, error) {
	return s.mig.ImportMemories(ctx, p, in)
}

// ImportExport holds another memory system's export in the quarantine
// (see [migration.Migration.ImportExport]).
func (s *Service) ImportExport(ctx context.Context, p Principal, in ImportExportInput) (importer.Result, error) {
	return s.mig.ImportExport(ctx, p, in)
}

// ListQuarantine returns a page of the held records (see
// [migration.Migration.ListQuarantine]).
func (s *Service) ListQuarantine(ctx context.Context, p Principal, q QuarantineQuery) (QuarantinePage, error) {
	return s.mig.ListQuarantine(ctx, p, q)
}

// RejectQuarantined drops held records (see
// [migration.Migration.RejectQuarantined]).
func (s *Service) RejectQuarantined(ctx context.Context, p Principal, ids []string, all bool) (int, uint64, error) {
	return s.mig.RejectQuarantined(ctx, p, ids, all)
}

// AdoptQuarantined makes held records claims here (see
// [migration.Migration.AdoptQuarantined]).
func (s *Service) AdoptQuarantined(ctx context.Context, p Principal, only string, in AdoptInput) (Adopted, error) {
	return s.mig.AdoptQuarantined(ctx, p, only, in)
}

// UnblockQuarantined lifts what blocks a held record (see
// [migration.Migration.UnblockQuarantined]).
func (s *Service) UnblockQuarantined(ctx context.Context, p Principal, id string, in UnblockInput) (QuarantineRecord, error) {
	return s.mig.UnblockQuarantined(ctx, p, id, in)
}

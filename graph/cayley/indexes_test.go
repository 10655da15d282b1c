package cayley

import (
	"path/filepath"
	"reflect"
	"testing"

	ckv "github.com/cayleygraph/cayley/graph/kv"
	hbolt "github.com/hidal-go/hidalgo/kv/bbolt"
	bolt "go.etcd.io/bbolt"

	"github.com/phc-project/phc/graph"
	"github.com/phc-project/phc/graph/graphtest"
)

func TestNewFilesIndexBySubjectPredicateObject(t *testing.T) {
	g, err := Open(filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for i := 0; i < 2; i++ {
		inds, err := readIndexes(g.db)
		if err != nil || !reflect.DeepEqual(inds, graphIndexes) {
			t.Fatalf("indexes = %v, %v; want %v", inds, err, graphIndexes)
		}
		if err := g.db.View(func(tx *bolt.Tx) error {
			if tx.Bucket([]byte("sp")) != nil || tx.Bucket([]byte("spo")) == nil {
				t.Fatal("the index buckets are not spo and ops")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := g.Reset(); err != nil { // a rebuilt file as well
			t.Fatal(err)
		}
	}
}

// openDefaultIndexes opens a graph in a file initialised with the kv
// layer's default indexes, as files made before graphIndexes are.
func openDefaultIndexes(t *testing.T) *Graph {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ckv.Init(hbolt.New(db), kvOptions); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if inds, _ := readIndexes(g.db); !reflect.DeepEqual(inds, ckv.DefaultQuadIndexes) {
		t.Fatalf("indexes = %v, want the defaults", inds)
	}
	return g
}

func TestBoltDefaultIndexes(t *testing.T) {
	graphtest.Run(t, func(t *testing.T) graph.Graph { return openDefaultIndexes(t) })
	graphtest.RunBatch(t, func(t *testing.T) graphtest.Batcher { return openDefaultIndexes(t) })
}

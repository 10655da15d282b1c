package store

import "go.etcd.io/bbolt"

// LeafPages returns the number of leaf pages of bucket, for tests.
func (b *Bolt) LeafPages(bucket string) int {
	n := 0
	b.db.View(func(tx *bbolt.Tx) error {
		if bk := tx.Bucket([]byte(bucket)); bk != nil {
			n = bk.Stats().LeafPageN
		}
		return nil
	})
	return n
}

package sqlstore

import (
	"context"
	"fmt"

	"github.com/sms-baseline/sms/contracts"
	"github.com/sms-baseline/sms/kernel"
)

const (
	putBlobSQL = `INSERT INTO ` + BlobsTable + ` ("hash", "data") VALUES (?, ?) ON CONFLICT ("hash") DO NOTHING`
	getBlobSQL = `SELECT "data" FROM ` + BlobsTable + ` WHERE "hash" = ?`
)

// blobStore is a kernel.BlobStore in BlobsTable.
type blobStore struct {
	db contracts.Database
}

// Put implements kernel.BlobStore.
func (b *blobStore) Put(ctx context.Context, data []byte) (string, error) {
	hash := kernel.HashCode(data)
	if data == nil {
		data = []byte{} // the column is NOT NULL; an empty blob is still a blob
	}
	if _, err := b.db.Query(ctx, putBlobSQL, hash, data); err != nil {
		return "", fmt.Errorf("put blob %s: %w", hash, err)
	}
	return hash, nil
}

// Get implements kernel.BlobStore.
func (b *blobStore) Get(ctx context.Context, hash string) ([]byte, error) {
	rows, err := b.db.Query(ctx, getBlobSQL, hash)
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", hash, err)
	}
	if len(rows) == 0 {
		return nil, &kernel.Error{Code: kernel.CodeNotFound, Op: "get blob", Message: "no blob " + hash}
	}
	data, err := asBytes(rows[0]["data"])
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", hash, err)
	}
	return data, nil
}

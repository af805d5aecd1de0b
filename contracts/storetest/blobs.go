package storetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/sms-baseline/sms/kernel"
)

// Put returns the kernel's hash and is idempotent; Get returns the bytes;
// an unknown hash is NOT_FOUND. Seen failing with ON CONFLICT DO NOTHING
// removed, and with Get's error code set to INTERNAL.
func testBlobs(t *testing.T, loc Location) {
	ctx := context.Background()
	st := open(t, loc)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	cases := map[string][]byte{"code": []byte("export default async function activate(cap) {}"),
		"binary": {0, 1, 2, 255, 0}, "empty": {}, "big": big}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			for i := range 2 {
				hash, err := st.Blobs().Put(ctx, data)
				if err != nil {
					t.Fatalf("Put #%d: %v", i+1, err)
				}
				if want := kernel.HashCode(data); hash != want {
					t.Fatalf("Put #%d = %s, want %s", i+1, hash, want)
				}
			}
			got, err := st.Blobs().Get(ctx, kernel.HashCode(data))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("Get returned %d bytes, want the %d put", len(got), len(data))
			}
		})
	}
	_, err := st.Blobs().Get(ctx, kernel.HashCode([]byte("never put")))
	if kernel.CodeOf(err) != kernel.CodeNotFound {
		t.Fatalf("Get of an unknown hash: error = %v, want code %s", err, kernel.CodeNotFound)
	}
}
